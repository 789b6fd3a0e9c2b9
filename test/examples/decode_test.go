package examples

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// cert-manager types are not in k8s.io/api; these mirror the cert-manager.io/v1
// fields the examples use, so strict decoding still rejects a misspelt field.
type certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		IsCA        bool     `json:"isCA,omitempty"`
		CommonName  string   `json:"commonName,omitempty"`
		SecretName  string   `json:"secretName"`
		DNSNames    []string `json:"dnsNames,omitempty"`
		Duration    string   `json:"duration,omitempty"`
		RenewBefore string   `json:"renewBefore,omitempty"`
		Usages      []string `json:"usages,omitempty"`
		PrivateKey  *struct {
			Algorithm      string `json:"algorithm,omitempty"`
			Size           int    `json:"size,omitempty"`
			RotationPolicy string `json:"rotationPolicy,omitempty"`
		} `json:"privateKey,omitempty"`
		IssuerRef struct {
			Group string `json:"group,omitempty"`
			Kind  string `json:"kind,omitempty"`
			Name  string `json:"name"`
		} `json:"issuerRef"`
	} `json:"spec"`
}

type issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SelfSigned *struct{} `json:"selfSigned,omitempty"`
		CA         *struct {
			SecretName string `json:"secretName"`
		} `json:"ca,omitempty"`
	} `json:"spec"`
}

// Prometheus-operator types are not in k8s.io/api either; these mirror the
// monitoring.coreos.com/v1 fields the examples and charts use.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []metricsEndpoint `json:"endpoints"`
	} `json:"spec"`
}

type podMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		PodMetricsEndpoints []metricsEndpoint `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

type metricsEndpoint struct {
	Port     string `json:"port"`
	Path     string `json:"path,omitempty"`
	Interval string `json:"interval,omitempty"`
}

type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name     string `json:"name"`
			Interval string `json:"interval,omitempty"`
			Rules    []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for,omitempty"`
				Labels      map[string]string `json:"labels,omitempty"`
				Annotations map[string]string `json:"annotations,omitempty"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// objects is one example's decoded manifests, by kind.
type objects struct {
	deployments     []*appsv1.Deployment
	configMaps      map[string]*corev1.ConfigMap
	secrets         map[string]*corev1.Secret
	services        []*corev1.Service
	serviceAccounts map[string]*corev1.ServiceAccount
	clusterRoles    map[string]*rbacv1.ClusterRole
	roles           map[string]*rbacv1.Role
	crbs            []*rbacv1.ClusterRoleBinding
	rbs             []*rbacv1.RoleBinding
	netpols         []*networkingv1.NetworkPolicy
	certificates    []*certificate
	issuers         map[string]*issuer
	pdbs            []*policyv1.PodDisruptionBudget
	serviceMonitors []*serviceMonitor
	podMonitors     []*podMonitor
	prometheusRules []*prometheusRule
}

func newObjects() *objects {
	return &objects{
		configMaps:      map[string]*corev1.ConfigMap{},
		secrets:         map[string]*corev1.Secret{},
		serviceAccounts: map[string]*corev1.ServiceAccount{},
		clusterRoles:    map[string]*rbacv1.ClusterRole{},
		roles:           map[string]*rbacv1.Role{},
		issuers:         map[string]*issuer{},
	}
}

var strictSerializer = func() *kjson.Serializer {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme, networkingv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Yaml: true, Strict: true})
}()

// splitDocs splits a multi-document YAML stream, dropping empty documents.
func splitDocs(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		d, err := r.Read()
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			docs = append(docs, d)
		}
	}
}

func stripComments(d []byte) []byte {
	var out []string
	for _, l := range strings.Split(string(d), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// decodeInto decodes every document strictly (unknown or duplicate fields
// fail) into its typed object and files it in o.
func decodeInto(o *objects, data []byte) error {
	docs, err := splitDocs(data)
	if err != nil {
		return err
	}
	for i, d := range docs {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(d, &tm); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		if tm.APIVersion == "cert-manager.io/v1" {
			switch tm.Kind {
			case "Certificate":
				var c certificate
				if err := yaml.UnmarshalStrict(d, &c); err != nil {
					return fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
				}
				o.certificates = append(o.certificates, &c)
			case "Issuer":
				var is issuer
				if err := yaml.UnmarshalStrict(d, &is); err != nil {
					return fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
				}
				o.issuers[is.Name] = &is
			default:
				return fmt.Errorf("document %d: unexpected cert-manager kind %q", i, tm.Kind)
			}
			continue
		}
		if tm.APIVersion == "monitoring.coreos.com/v1" {
			if err := decodeMonitoring(o, tm.Kind, d); err != nil {
				return fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
			}
			continue
		}
		obj, gvk, err := strictSerializer.Decode(d, nil, nil)
		if err != nil {
			return fmt.Errorf("document %d (%s %s): %w", i, tm.APIVersion, tm.Kind, err)
		}
		switch v := obj.(type) {
		case *appsv1.Deployment:
			o.deployments = append(o.deployments, v)
		case *corev1.ConfigMap:
			o.configMaps[v.Name] = v
		case *corev1.Secret:
			o.secrets[v.Name] = v
		case *corev1.Service:
			o.services = append(o.services, v)
		case *corev1.ServiceAccount:
			o.serviceAccounts[v.Name] = v
		case *rbacv1.ClusterRole:
			o.clusterRoles[v.Name] = v
		case *rbacv1.Role:
			o.roles[v.Name] = v
		case *rbacv1.ClusterRoleBinding:
			o.crbs = append(o.crbs, v)
		case *rbacv1.RoleBinding:
			o.rbs = append(o.rbs, v)
		case *networkingv1.NetworkPolicy:
			o.netpols = append(o.netpols, v)
		case *policyv1.PodDisruptionBudget:
			o.pdbs = append(o.pdbs, v)
		default:
			return fmt.Errorf("document %d: kind %s is not expected in an example", i, gvk)
		}
	}
	return nil
}

// decodeMonitoring decodes one Prometheus-operator object strictly.
func decodeMonitoring(o *objects, kind string, d []byte) error {
	switch kind {
	case "ServiceMonitor":
		var m serviceMonitor
		if err := yaml.UnmarshalStrict(d, &m); err != nil {
			return err
		}
		o.serviceMonitors = append(o.serviceMonitors, &m)
	case "PodMonitor":
		var m podMonitor
		if err := yaml.UnmarshalStrict(d, &m); err != nil {
			return err
		}
		o.podMonitors = append(o.podMonitors, &m)
	case "PrometheusRule":
		var r prometheusRule
		if err := yaml.UnmarshalStrict(d, &r); err != nil {
			return err
		}
		o.prometheusRules = append(o.prometheusRules, &r)
	default:
		return fmt.Errorf("unexpected monitoring.coreos.com kind %q", kind)
	}
	return nil
}
