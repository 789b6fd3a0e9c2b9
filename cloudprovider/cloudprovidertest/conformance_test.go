package cloudprovidertest

import "testing"

func TestInMemoryProviderConforms(t *testing.T) {
	Run(t, Harness{NewEnv: func(t *testing.T) *Env {
		return NewInMemoryEnv(
			CloudGroup{ID: "pool-a", Min: 1, Max: 10, Running: 3},
			CloudGroup{ID: "pool-b", Min: 0, Max: 5, Running: 1, NoTemplate: true, Options: true},
		)
	}})
}
