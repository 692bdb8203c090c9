package otlpreceiver

import (
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// encoding is a request body's format.
type encoding int

const (
	encProto encoding = iota // application/x-protobuf, and gRPC
	encJSON                  // application/json
)

const (
	protoContentType = "application/x-protobuf"
	jsonContentType  = "application/json"
)

// exportRequest is what ptraceotlp, plogotlp and pmetricotlp requests share.
type exportRequest interface {
	UnmarshalProto([]byte) error
	UnmarshalJSON([]byte) error
}

func (e encoding) unmarshal(req exportRequest, body []byte) error {
	var err error
	if e == encJSON {
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		return malformedError{err}
	}
	return nil
}

func (e encoding) contentType() string {
	if e == encJSON {
		return jsonContentType
	}
	return protoContentType
}

// format names the encoding in the receiver's self-metrics.
func (e encoding) format() string {
	if e == encJSON {
		return "json"
	}
	return "protobuf"
}

// emptyResponse is an empty Export*ServiceResponse: no fields, no bytes.
func (e encoding) emptyResponse() []byte {
	if e == encJSON {
		return []byte("{}")
	}
	return nil
}

func (e encoding) marshalStatus(s *spb.Status) ([]byte, error) {
	if e == encJSON {
		return protojson.Marshal(s)
	}
	return proto.Marshal(s)
}
