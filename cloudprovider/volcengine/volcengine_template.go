package volcengine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// templateInfo is what a group's template node is built from.
type templateInfo struct {
	instanceType volcapi.InstanceType
	zone         string
	arch         string
	os           string
}

// templateEntry caches a group's template inputs between refreshes.
type templateEntry struct {
	// key identifies the inputs; a change forces a new fetch.
	key       string
	fetchedAt time.Time
	info      *templateInfo
	// err is why no template can be built.
	err error
}

// templateSource says where a group's instance type comes from.
func templateSource(g volcapi.ScalingGroup) (key string, ok bool) {
	subnets := strings.Join(g.SubnetIDs, ",")
	switch {
	case g.ActiveConfigID != "":
		return "scc:" + g.ActiveConfigID + "|" + subnets, true
	case g.LaunchTemplateID != "":
		return "lt:" + g.LaunchTemplateID + ":" + g.LaunchTemplateVersion + ":" + strings.Join(g.LaunchTemplateTypes, ",") + "|" + subnets, true
	}
	return "none", false
}

// refreshTemplates fetches template inputs of new, changed or stale groups,
// one batched call per API; a failure keeps the previous entry.
func (m *manager) refreshTemplates(ctx context.Context, picked []managedGroup) {
	now := m.now()
	m.mu.RLock()
	var need []managedGroup
	for _, p := range picked {
		key, _ := templateSource(p.cloud)
		e, ok := m.templates[p.cloud.ID]
		switch {
		case !ok, e.key != key,
			e.info != nil && now.Sub(e.fetchedAt) >= templateTTL,
			e.info == nil && !errors.Is(e.err, cloudprovider.ErrNotImplemented) && now.Sub(e.fetchedAt) >= templateRetry:
			need = append(need, p)
		}
	}
	m.mu.RUnlock()
	if len(need) == 0 {
		return
	}
	entries, err := m.fetchTemplates(ctx, need, now)
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, e := range entries {
		m.templates[id] = e
	}
	if err != nil {
		klog.V(2).InfoS("Could not fetch template inputs; keeping previous templates", "provider", ProviderName, "err", err)
		for _, p := range need {
			if _, ok := m.templates[p.cloud.ID]; !ok {
				key, _ := templateSource(p.cloud)
				m.templates[p.cloud.ID] = &templateEntry{key: key, fetchedAt: now, err: fmt.Errorf("template inputs of %s: %w", p.cloud.ID, err)}
			}
		}
	}
}

// fetchTemplates resolves instance type, zone, arch and OS for groups.
func (m *manager) fetchTemplates(ctx context.Context, groups []managedGroup, now time.Time) (map[string]*templateEntry, error) {
	entries := map[string]*templateEntry{}
	typeOf := map[string]string{}
	imageOf := map[string]string{}
	zoneOf := map[string]string{}

	var configIDs []string
	for _, p := range groups {
		if p.cloud.ActiveConfigID != "" {
			configIDs = append(configIDs, p.cloud.ActiveConfigID)
		}
	}
	configs, err := m.api.ListScalingConfigurations(ctx, uniq(configIDs))
	if err != nil {
		return nil, err
	}
	byConfig := map[string]volcapi.ScalingConfiguration{}
	for _, c := range configs {
		byConfig[c.ID] = c
	}
	for _, p := range groups {
		g := p.cloud
		key, ok := templateSource(g)
		if !ok {
			entries[g.ID] = &templateEntry{key: key, fetchedAt: now, err: cloudprovider.Errorf(cloudprovider.ErrNotImplemented,
				"scaling group %s has neither an active scaling configuration nor a launch template", g.ID)}
			continue
		}
		if g.ActiveConfigID != "" {
			c, found := byConfig[g.ActiveConfigID]
			if !found || len(c.InstanceTypes) == 0 {
				entries[g.ID] = &templateEntry{key: key, fetchedAt: now, err: cloudprovider.Errorf(cloudprovider.ErrNotFound,
					"scaling configuration %s of group %s not found or has no instance type", g.ActiveConfigID, g.ID)}
				continue
			}
			typeOf[g.ID] = c.InstanceTypes[0]
			imageOf[g.ID] = c.ImageID
			zoneOf[g.ID] = c.ZoneID
			continue
		}
		if len(g.LaunchTemplateTypes) == 0 {
			// Auto Scaling names the launch template, not its instance type;
			// that needs ECS launch-template calls we do not make.
			entries[g.ID] = &templateEntry{key: key, fetchedAt: now, err: cloudprovider.Errorf(cloudprovider.ErrNotImplemented,
				"scaling group %s uses launch template %s without instance type overrides; its instance type is not exposed by the Auto Scaling API", g.ID, g.LaunchTemplateID)}
			continue
		}
		typeOf[g.ID] = g.LaunchTemplateTypes[0]
	}

	var typeIDs, imageIDs, subnetIDs []string
	for id, t := range typeOf {
		typeIDs = append(typeIDs, t)
		if imageOf[id] != "" {
			imageIDs = append(imageIDs, imageOf[id])
		}
	}
	for _, p := range groups {
		if _, ok := typeOf[p.cloud.ID]; ok && len(p.cloud.SubnetIDs) > 0 {
			subnetIDs = append(subnetIDs, p.cloud.SubnetIDs[0])
		}
	}
	types, err := m.api.ListInstanceTypes(ctx, uniq(typeIDs))
	if err != nil {
		return entries, err
	}
	byType := map[string]volcapi.InstanceType{}
	for _, t := range types {
		byType[t.ID] = t
	}
	// Subnet zones and image architectures only enrich a template: keys without
	// vpc:DescribeSubnets or ecs:DescribeImages get the configuration's zone
	// and linux/amd64 rather than no template.
	subnetZone := map[string]string{}
	if subnets, err := m.api.ListSubnets(ctx, uniq(subnetIDs)); err != nil {
		klog.InfoS("Cannot read subnet zones; templates use the scaling configuration's zone", "provider", ProviderName, "err", err)
	} else {
		for _, s := range subnets {
			subnetZone[s.ID] = s.ZoneID
		}
	}
	byImage := map[string]volcapi.Image{}
	if images, err := m.api.ListImages(ctx, uniq(imageIDs)); err != nil {
		klog.InfoS("Cannot read image architectures; templates assume linux/amd64", "provider", ProviderName, "err", err)
	} else {
		for _, im := range images {
			byImage[im.ID] = im
		}
	}

	for _, p := range groups {
		g := p.cloud
		typeID, ok := typeOf[g.ID]
		if !ok {
			continue
		}
		key, _ := templateSource(g)
		it, found := byType[typeID]
		if !found || it.CPUs <= 0 || it.MemoryMiB <= 0 {
			entries[g.ID] = &templateEntry{key: key, fetchedAt: now, err: cloudprovider.Errorf(cloudprovider.ErrNotFound,
				"instance type %s of group %s not found or without CPU/memory", typeID, g.ID)}
			continue
		}
		info := &templateInfo{instanceType: it, zone: zoneOf[g.ID], arch: "amd64", os: "linux"}
		if len(g.SubnetIDs) > 0 && subnetZone[g.SubnetIDs[0]] != "" {
			info.zone = subnetZone[g.SubnetIDs[0]]
		}
		if im, ok := byImage[imageOf[g.ID]]; ok {
			info.arch = kubeArch(im.Architecture)
			info.os = kubeOS(im.OSType)
		}
		entries[g.ID] = &templateEntry{key: key, fetchedAt: now, info: info}
	}
	return entries, nil
}

func kubeArch(a string) string {
	switch strings.ToLower(a) {
	case "arm64", "aarch64", "arm":
		return "arm64"
	}
	return "amd64"
}

func kubeOS(o string) string {
	if strings.EqualFold(o, "windows") {
		return "windows"
	}
	return "linux"
}

func uniq(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// template returns the cached template inputs of a group.
func (m *manager) template(id string) (*templateInfo, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.templates[id]
	if !ok {
		return nil, cloudprovider.Errorf(cloudprovider.ErrUnavailable, "template of %s not fetched yet", id)
	}
	if e.info == nil {
		return nil, e.err
	}
	return e.info, nil
}

// gpuTypes returns the GPU label values of every group's template.
func (m *manager) gpuTypes() map[string]struct{} {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[string]struct{}{}
	for _, e := range m.templates {
		if e.info != nil && e.info.instanceType.GPUCount > 0 {
			out[gpuLabelValue(e.info.instanceType.GPUModel)] = struct{}{}
		}
	}
	return out
}

// gpuLabelValue turns a product name into a valid label value.
func gpuLabelValue(model string) string {
	if model == "" {
		return "unknown"
	}
	b := []byte(strings.TrimSpace(model))
	for i, c := range b {
		if !(c == '-' || c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "-_.")
	if len(s) > 63 {
		s = strings.Trim(s[:63], "-_.")
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// buildTemplateNode renders what a fresh node of the group looks like.
func buildTemplateNode(groupID, region string, info *templateInfo, settings groupconfig.GroupSettings) *corev1.Node {
	it := info.instanceType
	spec := groupconfig.TemplateSpec{
		GroupID: groupID, InstanceType: it.ID, OS: info.os, Arch: info.arch, Region: region, Zone: info.zone,
		CPUs: int64(it.CPUs), MemoryBytes: int64(it.MemoryMiB) * 1024 * 1024,
		ProviderLabels: map[string]string{LabelScalingGroup: groupID},
		Settings:       settings,
	}
	if it.GPUCount > 0 {
		spec.GPUs = int64(it.GPUCount)
		spec.ProviderLabels[GPULabel] = gpuLabelValue(it.GPUModel)
	}
	return groupconfig.BuildTemplateNode(spec)
}
