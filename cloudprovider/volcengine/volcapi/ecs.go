package volcapi

import (
	"context"
	"fmt"

	"github.com/volcengine/volcengine-go-sdk/service/ecs"
	"github.com/volcengine/volcengine-go-sdk/service/vpc"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

// InstanceType is the part of an ECS instance type the template uses.
type InstanceType struct {
	ID        string
	Family    string
	CPUs      int
	MemoryMiB int
	GPUCount  int
	// GPUModel is the first GPU device's product name.
	GPUModel string
}

// Image is the part of an ECS image the template uses.
type Image struct {
	ID           string
	Architecture string
	OSType       string
}

// Subnet maps a subnet to its zone.
type Subnet struct {
	ID     string
	ZoneID string
}

// ListInstanceTypes fetches instance types by id (in batches of 10, all pages).
func (c *Client) ListInstanceTypes(ctx context.Context, ids []string) ([]InstanceType, error) {
	var out []InstanceType
	for start := 0; start < len(ids); start += maxInstanceTypeIDs {
		end := min(start+maxInstanceTypeIDs, len(ids))
		var token string
		for page := 1; ; page++ {
			if page > MaxPages {
				return nil, fmt.Errorf("volcengine %s: more than %d pages", ActionDescribeInstanceTypes, MaxPages)
			}
			in := &ecs.DescribeInstanceTypesInput{InstanceTypeIds: strs(ids[start:end]), MaxResults: int32Ptr(maxInstanceTypeIDs)}
			if token != "" {
				in.NextToken = sp(token)
			}
			actx, ans := cloudhttp.RecordAnswer(ctx)
			resp, err := c.ecs.DescribeInstanceTypesWithContext(actx, in)
			if err != nil {
				return nil, c.fail(ctx, ActionDescribeInstanceTypes, ans, err)
			}
			for _, t := range resp.InstanceTypes {
				if t == nil || str(t.InstanceTypeId) == "" {
					continue
				}
				it := InstanceType{ID: str(t.InstanceTypeId), Family: str(t.InstanceTypeFamily)}
				if t.Processor != nil {
					it.CPUs = i32(t.Processor.Cpus)
				}
				if t.Memory != nil {
					it.MemoryMiB = i32(t.Memory.Size)
				}
				if t.Gpu != nil {
					for _, d := range t.Gpu.GpuDevices {
						if d == nil {
							continue
						}
						it.GPUCount += i32(d.Count)
						if it.GPUModel == "" {
							it.GPUModel = str(d.ProductName)
						}
					}
				}
				out = append(out, it)
			}
			token = str(resp.NextToken)
			if token == "" || len(resp.InstanceTypes) == 0 {
				break
			}
		}
	}
	return out, nil
}

// ListImages fetches images by id, all pages.
func (c *Client) ListImages(ctx context.Context, ids []string) ([]Image, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []Image
	var token string
	for page := 1; page <= MaxPages; page++ {
		in := &ecs.DescribeImagesInput{ImageIds: strs(ids), MaxResults: int32Ptr(PageSize)}
		if token != "" {
			in.NextToken = sp(token)
		}
		actx, ans := cloudhttp.RecordAnswer(ctx)
		resp, err := c.ecs.DescribeImagesWithContext(actx, in)
		if err != nil {
			return nil, c.fail(ctx, ActionDescribeImages, ans, err)
		}
		for _, im := range resp.Images {
			if im == nil || str(im.ImageId) == "" {
				continue
			}
			out = append(out, Image{ID: str(im.ImageId), Architecture: str(im.Architecture), OSType: str(im.OsType)})
		}
		token = str(resp.NextToken)
		if token == "" || len(resp.Images) == 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("volcengine %s: more than %d pages", ActionDescribeImages, MaxPages)
}

// ListSubnets fetches subnets by id, all pages.
func (c *Client) ListSubnets(ctx context.Context, ids []string) ([]Subnet, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []Subnet
	for page := 1; page <= MaxPages; page++ {
		size := int64(PageSize)
		pn := int64(page)
		actx, ans := cloudhttp.RecordAnswer(ctx)
		resp, err := c.vpc.DescribeSubnetsWithContext(actx, &vpc.DescribeSubnetsInput{SubnetIds: strs(ids), PageNumber: &pn, PageSize: &size})
		if err != nil {
			return nil, c.fail(ctx, ActionDescribeSubnets, ans, err)
		}
		for _, sn := range resp.Subnets {
			if sn == nil || str(sn.SubnetId) == "" {
				continue
			}
			out = append(out, Subnet{ID: str(sn.SubnetId), ZoneID: str(sn.ZoneId)})
		}
		total := 0
		if resp.TotalCount != nil {
			total = int(*resp.TotalCount)
		}
		if lastPage(len(resp.Subnets), page*PageSize, total) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("volcengine %s: more than %d pages", ActionDescribeSubnets, MaxPages)
}
