// Package volcapi is the Volcengine provider's thin client: the few Auto
// Scaling, ECS and VPC calls it needs, made through the official
// volcengine-go-sdk over the shared HTTP stack (cloudhttp.NewHTTPClient).
// The SDK's retries are off (ours respect the caller's deadline), and errors
// are classified from the response's error code. The SDK signs each request
// before it reaches the stack, so Volcengine adds no layer of its own.
package volcapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	"github.com/volcengine/volcengine-go-sdk/service/ecs"
	"github.com/volcengine/volcengine-go-sdk/service/vpc"
	"github.com/volcengine/volcengine-go-sdk/volcengine"
	"github.com/volcengine/volcengine-go-sdk/volcengine/credentials"
	"github.com/volcengine/volcengine-go-sdk/volcengine/session"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// Config holds what the client needs.
type Config struct {
	Region string
	// AccessKey and SecretKey are read at every signature renewal, so keys
	// from rotated files are picked up.
	AccessKey *credential.Credential
	SecretKey *credential.Credential
	// Endpoint is a host ("open.volcengineapi.com") or a URL with scheme.
	Endpoint string
	// DisableSSL makes a scheme-less Endpoint use http://.
	DisableSSL bool
	// Build carries what main sets on every cloud client (User-Agent,
	// instrumentation, rate limit) into cloudhttp.NewHTTPClient.
	Build registry.BuildOptions
	// Retry tunes the retries (tests inject Sleep); zero values take the defaults.
	Retry cloudhttp.RetryOptions
}

// String redacts the keys so a Config can be logged or printed safely.
func (c Config) String() string {
	return fmt.Sprintf("volcapi.Config{Region:%q Endpoint:%q DisableSSL:%t AccessKey:%s SecretKey:%s}",
		c.Region, c.Endpoint, c.DisableSSL, c.AccessKey, c.SecretKey)
}

// GoString redacts like String, for %#v.
func (c Config) GoString() string { return c.String() }

// Client calls the Volcengine OpenAPI. It is safe for concurrent use.
type Client struct {
	as   *autoscaling.AUTOSCALING
	ecs  *ecs.ECS
	vpc  *vpc.VPC
	keys rotatingCredentials
}

// rotatingCredentials gives the SDK the current keys; the SDK reads them
// again after a key file changes.
type rotatingCredentials struct{ accessKey, secretKey *credential.Credential }

// Retrieve implements credentials.Provider.
func (r rotatingCredentials) Retrieve() (credentials.Value, error) {
	ak, err := r.accessKey.Value()
	if err != nil {
		return credentials.Value{}, err
	}
	sk, err := r.secretKey.Value()
	if err != nil {
		return credentials.Value{}, err
	}
	return credentials.Value{AccessKeyID: ak.Reveal(), SecretAccessKey: sk.Reveal(), ProviderName: "cluster-autoscaler-provider"}, nil
}

// IsExpired implements credentials.Provider.
func (r rotatingCredentials) IsExpired() bool { return r.accessKey.Changed() || r.secretKey.Changed() }

// current returns the keys now in use, to scrub them from server messages.
func (r rotatingCredentials) current() []credential.Secret {
	ak, _ := r.accessKey.Value()
	sk, _ := r.secretKey.Value()
	return []credential.Secret{ak, sk}
}

// New builds a client. It contacts nothing.
func New(cfg Config) (*Client, error) {
	var missing []string
	if cfg.Region == "" {
		missing = append(missing, "region")
	}
	if !cfg.AccessKey.IsSet() {
		missing = append(missing, "access key")
	}
	if !cfg.SecretKey.IsSet() {
		missing = append(missing, "secret key")
	}
	if cfg.Endpoint == "" {
		missing = append(missing, "endpoint")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("volcapi: missing %s", strings.Join(missing, ", "))
	}
	// The SDK replaces Proxy on a bare *http.Transport with one that ignores
	// NO_PROXY. The stack's outermost layer is not an *http.Transport, so
	// the SDK leaves it alone.
	hc := cloudhttp.NewHTTPClient(cfg.Build.ClientOptions(), cloudhttp.HTTPStack{Cloud: cloudName, Operation: Operation, Retry: cfg.Retry})
	keys := rotatingCredentials{accessKey: cfg.AccessKey, secretKey: cfg.SecretKey}
	vcfg := volcengine.NewConfig().
		WithRegion(cfg.Region).
		WithCredentials(credentials.NewCredentials(keys)).
		WithEndpoint(cfg.Endpoint).
		WithDisableSSL(cfg.DisableSSL).
		WithHTTPClient(hc).
		// Retries live in our transport, where they respect the caller's deadline.
		WithMaxRetries(0).
		WithLogLevel(volcengine.LogOff)
	sess, err := session.NewSession(vcfg)
	if err != nil {
		return nil, fmt.Errorf("volcapi: create SDK session: %w", err)
	}
	return &Client{as: autoscaling.New(sess), ecs: ecs.New(sess), vpc: vpc.New(sess), keys: keys}, nil
}

// Operation maps a request to a bounded metrics label: every Volcengine call is
// "GET /" and differs only in its Action parameter.
func Operation(req *http.Request) string {
	action := req.URL.Query().Get("Action")
	if action == "" {
		action = "unknown"
	}
	return req.Method + " /?Action=" + action
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func i32(p *int32) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

func sp(s string) *string { return &s }

func int32Ptr(n int) *int32 {
	v := int32(n)
	return &v
}

func strs(in []string) []*string {
	out := make([]*string, 0, len(in))
	for _, s := range in {
		out = append(out, sp(s))
	}
	return out
}

// fail turns an SDK error into ours. The caller's context error wins, so a
// deadline is reported as one. Server messages are scrubbed of our keys,
// since an authentication error may quote the access key it rejected.
func (c *Client) fail(ctx context.Context, action string, ans *cloudhttp.Answer, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("volcengine %s: %w", action, cerr)
	}
	err = classify(action, ans, err)
	var ae *cloudhttp.APIError
	if errors.As(err, &ae) {
		ae.Message = credential.ScrubSecrets(ae.Message, c.keys.current()...)
	}
	return err
}
