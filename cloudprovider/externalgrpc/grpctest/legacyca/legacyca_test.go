package legacyca

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/wirevectors"
)

// changedIn135 are the messages whose layout CA 1.35 changed; every other
// message is the same in both generations.
var changedIn135 = map[string]bool{
	"PricingNodePriceRequest":             true,
	"PricingPodPriceRequest":              true,
	"NodeGroupTemplateNodeInfoResponse":   true,
	"NodeGroupAutoscalingOptions":         true,
	"NodeGroupAutoscalingOptionsRequest":  true,
	"NodeGroupAutoscalingOptionsResponse": true,
}

// TestLayoutMatchesCA133 proves this client speaks CA 1.33's layout: the CA
// 1.33.6 vectors decode into our messages with nothing unknown and re-encode
// to the same bytes, and so do the upstream vectors of every message 1.35
// left unchanged.
func TestLayoutMatchesCA133(t *testing.T) {
	legacy := roundTrip(t, wirevectors.Dir(t, wirevectors.Legacy), func(string) bool { return true })
	if legacy != 5 {
		t.Fatalf("%d legacy vectors checked, want 5", legacy)
	}
	current := roundTrip(t, wirevectors.Dir(t, wirevectors.Current), func(name string) bool { return !changedIn135[name] })
	if current != 34-len(changedIn135) {
		t.Fatalf("%d unchanged upstream vectors checked, want %d", current, 34-len(changedIn135))
	}
}

func roundTrip(t *testing.T, dir string, include func(name string) bool) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Message, File string }
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		name := c.Message[strings.LastIndex(c.Message, ".")+1:]
		if !include(name) {
			continue
		}
		n++
		t.Run(filepath.Base(dir)+"/"+c.File, func(t *testing.T) {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName("legacyca.externalgrpc." + name))
			if err != nil {
				t.Fatal(err)
			}
			wire, err := os.ReadFile(filepath.Join(dir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			msg := mt.New().Interface()
			if err := proto.Unmarshal(wire, msg); err != nil {
				t.Fatal(err)
			}
			if u := msg.ProtoReflect().GetUnknown(); len(u) > 0 {
				t.Fatalf("%d bytes unknown to the legacy layout", len(u))
			}
			back, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
			if err != nil || !bytes.Equal(back, wire) {
				t.Fatalf("re-encoded (%v):\n got %x\nwant %x", err, back, wire)
			}
		})
	}
	return n
}
