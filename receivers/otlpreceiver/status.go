package otlpreceiver

import (
	"errors"
	"net/http"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// malformedError is a request that cannot be decoded: retrying cannot help.
type malformedError struct{ err error }

func (e malformedError) Error() string { return "malformed request: " + e.err.Error() }
func (e malformedError) Unwrap() error { return e.err }

// malformedMessage is what a client is told about a body it cannot have
// meant: the decoder's own message quotes the body's bytes, which may be
// anything (not UTF-8, or data the client did not mean to echo back).
const malformedMessage = "malformed request: the body is not an OTLP export request in the encoding its Content-Type names"

// errorStatus is the status a client gets for err, as from the stock
// receiver (v0.165.0): a status error passes through, a permanent pipeline
// error is Internal (it is not the client's fault), any other pipeline
// error is Unavailable, so the client retries.
func errorStatus(err error) *status.Status {
	if errors.As(err, new(malformedError)) {
		return status.New(codes.InvalidArgument, malformedMessage)
	}
	if s, ok := status.FromError(err); ok {
		return s
	}
	if consumererror.IsPermanent(err) {
		return status.New(codes.Internal, err.Error())
	}
	return status.New(codes.Unavailable, err.Error())
}

// httpStatusCode maps a status to OTLP/HTTP's codes, as the stock receiver
// does: 429 and 503 are the retryable ones.
func httpStatusCode(s *status.Status) int {
	switch s.Code() {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange, codes.Unavailable, codes.DataLoss:
		return http.StatusServiceUnavailable
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.Unimplemented:
		return http.StatusNotFound
	default:
		return http.StatusInternalServerError
	}
}

// httpStatus is the status sent in the body of an HTTP error response that
// did not come from a status (gRPC's HTTP mapping, as the stock receiver).
func httpStatus(code int, msg string) *status.Status {
	c := codes.Unknown
	switch code {
	case http.StatusBadRequest:
		c = codes.InvalidArgument
	case http.StatusUnauthorized:
		c = codes.Unauthenticated
	case http.StatusForbidden:
		c = codes.PermissionDenied
	case http.StatusNotFound:
		c = codes.Unimplemented
	case http.StatusTooManyRequests:
		c = codes.ResourceExhausted
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		c = codes.Unavailable
	}
	return status.New(c, msg)
}

// retryDelay is the throttling delay a status carries, if any.
func retryDelay(s *status.Status) *errdetails.RetryInfo {
	for _, d := range s.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri
		}
	}
	return nil
}
