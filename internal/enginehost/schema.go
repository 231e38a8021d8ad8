package enginehost

import (
	"context"
	"fmt"
	"net"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"
)

// schemaResponse is the protocol's message the front carries.
const schemaResponse = "tfplugin6.GetProviderSchema.Response"

// SchemaAnswer returns the encoded answer newServer's provider gives GetProviderSchema over
// gRPC, as Terraform receives it, encoded deterministically (maps in key order): what the front
// carries (internal/front's schema.pb).
func SchemaAnswer(ctx context.Context, name string, newServer func() tfprotov6.ProviderServer) ([]byte, error) {
	raw, err := rawSchemaAnswer(ctx, name, newServer)
	if err != nil {
		return nil, err
	}
	m, err := decodeSchema(raw)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// SameSchema reports whether two encoded answers say the same.
func SameSchema(a, b []byte) (bool, error) {
	ma, err := decodeSchema(a)
	if err != nil {
		return false, err
	}
	mb, err := decodeSchema(b)
	if err != nil {
		return false, err
	}
	return proto.Equal(ma, mb), nil
}

func decodeSchema(b []byte) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(schemaResponse))
	var m proto.Message
	if err == nil {
		m = mt.New().Interface()
	} else {
		d, derr := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(schemaResponse))
		if derr != nil {
			return nil, fmt.Errorf("find %s: %w", schemaResponse, derr)
		}
		md, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			return nil, fmt.Errorf("%s is no message", schemaResponse)
		}
		m = dynamicpb.NewMessage(md)
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", schemaResponse, err)
	}
	return m, nil
}

// rawCodec passes bytes through.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("cannot encode %T", v)
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("cannot decode into %T", v)
	}
	*b = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func rawSchemaAnswer(ctx context.Context, name string, newServer func() tfprotov6.ProviderServer) ([]byte, error) {
	l := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(front.MaxMessage), grpc.MaxSendMsgSize(front.MaxMessage))
	if err := (&tf6server.GRPCProviderPlugin{GRPCProvider: newServer, Name: name}).GRPCServer(nil, srv); err != nil {
		return nil, err
	}
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	conn, err := grpc.NewClient("passthrough:///schema",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return l.DialContext(ctx) }),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(front.MaxMessage)))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	req, resp := []byte{}, []byte{}
	if err := conn.Invoke(ctx, "/tfplugin6.Provider/GetProviderSchema", &req, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
		return nil, fmt.Errorf("GetProviderSchema: %w", err)
	}
	return resp, nil
}
