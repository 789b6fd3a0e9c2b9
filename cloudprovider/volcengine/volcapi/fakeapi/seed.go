package fakeapi

// The groups SeedStandard makes.
const (
	// StandardMainGroup has min 1, max 10 and 3 instances in service.
	StandardMainGroup = "scg-main"
	// StandardOtherGroup has min 0, max 5 and 1 instance in service, of a
	// GPU type.
	StandardOtherGroup = "scg-other"
)

// SeedStandard fills s with the tests' standard seed: StandardMainGroup
// and StandardOtherGroup, both tagged ca=on, with their template inputs,
// and a group without that tag, then settles them.
func (s *Server) SeedStandard() {
	s.AddSubnet(Subnet{ID: "subnet-a", ZoneID: "cn-beijing-a"})
	s.AddSubnet(Subnet{ID: "subnet-b", ZoneID: "cn-beijing-b"})
	s.AddImage(Image{ID: "image-linux", Architecture: "x86_64", OSType: "Linux"})
	s.AddImage(Image{ID: "image-arm", Architecture: "arm64", OSType: "Linux"})
	s.AddInstanceType(InstanceType{ID: "ecs.g3i.xlarge", CPUs: 4, MemoryMiB: 16384})
	s.AddInstanceType(InstanceType{ID: "ecs.gni2.3xlarge", CPUs: 12, MemoryMiB: 47104, GPUCount: 1, GPUModel: "NVIDIA A10"})
	s.AddConfiguration(Configuration{ID: "scc-main", GroupID: StandardMainGroup, InstanceTypes: []string{"ecs.g3i.xlarge"}, ImageID: "image-linux"})
	s.AddConfiguration(Configuration{ID: "scc-other", GroupID: StandardOtherGroup, InstanceTypes: []string{"ecs.gni2.3xlarge"}, ImageID: "image-arm"})
	s.AddGroup(Group{ID: StandardMainGroup, Name: "main", Min: 1, Max: 10, Desired: 3, ActiveConfigID: "scc-main",
		SubnetIDs: []string{"subnet-a"}, Tags: map[string]string{"ca": "on", "pool": "main"}})
	s.AddGroup(Group{ID: StandardOtherGroup, Name: "other", Min: 0, Max: 5, Desired: 1, ActiveConfigID: "scc-other",
		SubnetIDs: []string{"subnet-b"}, Tags: map[string]string{"ca": "on", "pool": "gpu"}})
	s.AddGroup(Group{ID: "scg-unmanaged", Name: "unmanaged", Min: 0, Max: 5, Desired: 1, ActiveConfigID: "scc-main"})
	s.Reconcile()
	s.Settle()
}
