package externalgrpc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	_ "google.golang.org/protobuf/types/known/wrapperspb" // the GPU-types vector packs a StringValue in an Any

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/wirevectors"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

type wireCase struct {
	Message string          `json:"message"`
	File    string          `json:"file"`
	JSON    json.RawMessage `json:"json"`
}

func loadVectors(t *testing.T, vectorDir string) []wireCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(vectorDir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []wireCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	return cases
}

// TestWireVectors decodes and re-encodes every upstream vector in both
// directions, so a renamed, renumbered or retyped field fails here.
func TestWireVectors(t *testing.T) {
	vectorDir := wirevectors.Dir(t, wirevectors.Current)
	cases := loadVectors(t, vectorDir)
	if len(cases) != 34 {
		t.Fatalf("cases.json lists %d vectors, want 34", len(cases))
	}
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(c.Message))
			if err != nil {
				t.Fatalf("message %s is not in our generated registry: %v", c.Message, err)
			}
			if mt.Descriptor().ParentFile().Path() != protos.File_externalgrpc_proto.Path() {
				t.Fatalf("message %s resolved from %s, not our proto", c.Message, mt.Descriptor().ParentFile().Path())
			}
			wire, err := os.ReadFile(filepath.Join(vectorDir, c.File))
			if err != nil {
				t.Fatal(err)
			}

			// binary -> message -> protojson, compared as JSON values.
			msg := mt.New().Interface()
			if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(wire, msg); err != nil {
				t.Fatalf("unmarshal binary: %v", err)
			}
			if unknown := msg.ProtoReflect().GetUnknown(); len(unknown) > 0 {
				t.Fatalf("binary vector has %d bytes our message does not know (field renumbered or missing)", len(unknown))
			}
			js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
			if err != nil {
				t.Fatalf("marshal protojson: %v", err)
			}
			var got, want any
			if err := json.Unmarshal(js, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(c.JSON, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("protojson differs:\n got %s\nwant %s", js, c.JSON)
			}

			// protojson -> message -> deterministic binary, compared byte for byte.
			back := mt.New().Interface()
			if err := protojson.Unmarshal(c.JSON, back); err != nil {
				t.Fatalf("unmarshal protojson: %v", err)
			}
			bin, err := proto.MarshalOptions{Deterministic: true}.Marshal(back)
			if err != nil {
				t.Fatalf("marshal binary: %v", err)
			}
			if !bytes.Equal(bin, wire) {
				t.Fatalf("binary differs:\n got %x\nwant %x", bin, wire)
			}
		})
	}
}

// TestServiceMethods pins the 15 method paths the upstream client calls.
func TestServiceMethods(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(wirevectors.Dir(t, wirevectors.Current), "methods.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(raw))
	var got []string
	sd := protos.CloudProvider_ServiceDesc
	for _, m := range sd.Methods {
		got = append(got, "/"+sd.ServiceName+"/"+m.MethodName)
	}
	if len(sd.Streams) != 0 {
		t.Fatalf("service has %d streaming methods, want none", len(sd.Streams))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("methods differ:\n got %v\nwant %v", got, want)
	}
}
