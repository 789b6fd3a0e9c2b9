// Command kube-apiserver is the upstream Kubernetes API server, built from
// k8s.io/kubernetes as a module so tests can run it without a container
// engine or a binary download. hack/apiserver/run.sh builds and starts it.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
