//go:build !vultr && !volcengine && !exoscale

package router
