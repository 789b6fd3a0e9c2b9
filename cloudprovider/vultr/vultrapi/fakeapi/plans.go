package fakeapi

// StandardPlans is a small catalogue shaped like Vultr's: two vc2 plans, one
// vhf plan and one vcg GPU plan (gpu_type and gpu_vram_gb set).
func StandardPlans() []Plan {
	locs := []string{"ewr", "ams", "fra"}
	return []Plan{
		{ID: "vc2-1c-2gb", VCPUCount: 1, RAM: 2048, Disk: 55, DiskCount: 1, Bandwidth: 2048, MonthlyCost: 10, Type: "vc2", Locations: locs},
		{ID: "vc2-2c-4gb", VCPUCount: 2, RAM: 4096, Disk: 80, DiskCount: 1, Bandwidth: 3072, MonthlyCost: 20, Type: "vc2", Locations: locs},
		{ID: "vhf-4c-16gb", VCPUCount: 4, RAM: 16384, Disk: 384, DiskCount: 1, Bandwidth: 4096, MonthlyCost: 96, Type: "vhf", Locations: locs},
		{ID: "vcg-a16-6c-64g-16vram", VCPUCount: 6, RAM: 65536, Disk: 350, DiskCount: 1, Bandwidth: 6144, MonthlyCost: 501.22, Type: "vcg",
			GPUVRAMGB: 16, GPUType: "NVIDIA_A16", Locations: locs},
	}
}

// StandardMetalPlans is one bare-metal plan, served only under /v2/plans-metal.
func StandardMetalPlans() []MetalPlan {
	return []MetalPlan{{
		ID: "vbm-8c-132gb", CPUCount: 8, CPUModel: "E-2288G", CPUThreads: 16, RAM: 131072, Disk: 1920, DiskCount: 2,
		Bandwidth: 10240, MonthlyCost: 350, Type: "SSD", Locations: []string{"ewr"},
	}}
}
