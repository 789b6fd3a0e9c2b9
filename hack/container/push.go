package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// pushOptions says where an index goes and how to authenticate.
type pushOptions struct {
	image string
	tag   string
	// insecure allows plain HTTP, for a registry on a private network.
	insecure bool
	// keychain resolves credentials; authn.DefaultKeychain reads the standard
	// Docker config ($DOCKER_CONFIG/config.json, credential helpers included).
	keychain authn.Keychain
	// transport is the HTTP transport; nil means http.DefaultTransport.
	transport http.RoundTripper
}

// push uploads idx to image:tag and returns the pushed reference by digest.
func push(ctx context.Context, idx v1.ImageIndex, o pushOptions) (name.Digest, error) {
	var nameOpts []name.Option
	if o.insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	ref, err := name.NewTag(o.image+":"+o.tag, nameOpts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("image reference %s:%s: %w", o.image, o.tag, err)
	}
	kc := o.keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc)}
	if o.transport != nil {
		opts = append(opts, remote.WithTransport(o.transport))
	}
	if err := remote.WriteIndex(ref, idx, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return ref.Context().Digest(d.String()), nil
}
