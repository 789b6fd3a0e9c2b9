package examples

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// flagValue returns the value of --name=value (or "--name value") in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func volume(d *appsv1.Deployment, name string) *corev1.Volume {
	for i := range d.Spec.Template.Spec.Volumes {
		if d.Spec.Template.Spec.Volumes[i].Name == name {
			return &d.Spec.Template.Spec.Volumes[i]
		}
	}
	return nil
}

// podContainers lists a pod's init containers (native sidecars among them)
// and its containers.
func podContainers(spec corev1.PodSpec) []corev1.Container {
	return append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
}

// isNativeSidecar: an init container that keeps running beside the others.
func isNativeSidecar(spec corev1.PodSpec, name string) bool {
	for _, c := range spec.InitContainers {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

// findContainer returns the one container in the example matching match.
func findContainer(t *testing.T, o *objects, match func(corev1.Container) bool) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	var (
		dep   *appsv1.Deployment
		found corev1.Container
		n     int
	)
	for _, d := range o.deployments {
		for _, c := range podContainers(d.Spec.Template.Spec) {
			if match(c) {
				dep, found = d, c
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("want exactly one matching container, found %d", n)
	}
	return dep, found
}

func metav1LabelSelector(d *appsv1.Deployment) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(d.Spec.Selector)
}

func metav1Selector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}

func toSubjects(in []rbacv1.Subject) []rbacSubject {
	out := make([]rbacSubject, len(in))
	for i, s := range in {
		out[i] = rbacSubject{Kind: s.Kind, Name: s.Name, Namespace: s.Namespace}
	}
	return out
}

func labelsOf(d *appsv1.Deployment) labels.Set { return labels.Set(d.Spec.Template.Labels) }
