//go:build volcengine

package router

import _ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine"
