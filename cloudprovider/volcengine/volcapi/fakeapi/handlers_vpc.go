package fakeapi

// maxSubnetIDs bounds SubnetIds.N. The bound is the fake's: the provider
// asks for a group's few subnets and relies on no documented limit.
const maxSubnetIDs = 100

func (s *Server) describeSubnets(r *params) (any, *apiError) {
	p := r.numberPage()
	ids := r.filter("SubnetIds", maxSubnetIDs)
	if r.err != nil {
		return nil, r.err
	}
	matched := matching(byID(s.subnets), func(sn *Subnet) bool { return ids(sn.ID) })
	return listResult(p, s.opts.TotalCountSkew, "Subnets", matched, func(sn *Subnet) map[string]any {
		return map[string]any{"SubnetId": sn.ID, "ZoneId": sn.ZoneID, "VpcId": "vpc-fake", "Status": "Available"}
	}), nil
}
