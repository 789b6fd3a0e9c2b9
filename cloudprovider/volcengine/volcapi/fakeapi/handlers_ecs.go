package fakeapi

// maxInstanceTypeIDs bounds InstanceTypeIds.N (ECS API reference,
// DescribeInstanceTypes).
const maxInstanceTypeIDs = 10

func (s *Server) describeInstanceTypes(r *params) (any, *apiError) {
	ids := r.filter("InstanceTypeIds", maxInstanceTypeIDs)
	// MaxResults defaults to 10 (ECS API reference, DescribeInstanceTypes).
	p := r.tokenPage(10)
	if r.err != nil {
		return nil, r.err
	}
	matched := matching(byID(s.types), func(t *InstanceType) bool { return ids(t.ID) })
	return listResult(p, s.opts.TotalCountSkew, "InstanceTypes", matched, instanceTypeJSON), nil
}

func instanceTypeJSON(t *InstanceType) map[string]any {
	m := map[string]any{
		"InstanceTypeId":     t.ID,
		"InstanceTypeFamily": t.Family,
		"Processor":          map[string]any{"Cpus": t.CPUs, "Model": "Fake CPU"},
		"Memory":             map[string]any{"Size": t.MemoryMiB},
	}
	if t.GPUCount > 0 {
		m["Gpu"] = map[string]any{"GpuDevices": []map[string]any{{
			"Count": t.GPUCount, "ProductName": t.GPUModel, "Memory": map[string]any{"Size": 24576},
		}}}
	}
	return m
}

func (s *Server) describeImages(r *params) (any, *apiError) {
	ids := matchAny(r.list("ImageIds"))
	// The default MaxResults is the fake's choice: the client always sets it.
	p := r.tokenPage(20)
	if r.err != nil {
		return nil, r.err
	}
	matched := matching(byID(s.images), func(im *Image) bool { return ids(im.ID) })
	return listResult(p, s.opts.TotalCountSkew, "Images", matched, func(im *Image) map[string]any {
		return map[string]any{"ImageId": im.ID, "Architecture": im.Architecture, "OsType": im.OSType, "Status": "available"}
	}), nil
}
