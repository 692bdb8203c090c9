package otlpreceiver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"google.golang.org/grpc/status"

	"github.com/sidecarhq/sidecar/internal/rawconn"
)

// The OTLP/HTTP paths.
const (
	tracesPath  = "/v1/traces"
	logsPath    = "/v1/logs"
	metricsPath = "/v1/metrics"
)

func (r *otlpReceiver) startHTTP(ctx context.Context, host component.Host) error {
	cfg := r.cfg.Protocols.HTTP.Get()
	if cfg == nil {
		return nil
	}
	mux := http.NewServeMux()
	if r.nextTraces != nil {
		mux.Handle(tracesPath, httpHandler(r.consumeTraces, r.obsHTTP))
	}
	if r.nextLogs != nil {
		mux.Handle(logsPath, httpHandler(r.consumeLogs, r.obsHTTP))
	}
	if r.nextMetrics != nil {
		mux.Handle(metricsPath, httpHandler(r.consumeMetrics, r.obsHTTP))
	}
	var err error
	r.serverHTTP, err = cfg.ToServer(ctx, host.GetExtensions(), r.set.TelemetrySettings, mux, confighttp.WithErrorHandler(errorHandler))
	if err != nil {
		return fmt.Errorf("otlp receiver: HTTP server: %w", err)
	}
	ln, err := cfg.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("otlp receiver: HTTP listener on %s: %w", cfg.NetAddr.Endpoint, err)
	}
	r.logListening("http", ln.Addr())
	raw := rawListener{Listener: ln, wrap: rawconn.Wrap}
	r.serve(host, func() error { return r.serverHTTP.Serve(raw) }, http.ErrServerClosed)
	return nil
}

// httpHandler serves one signal's path. confighttp has already
// decompressed the body and limits it to max_request_body_size.
func httpHandler(consume consumeFunc, obs *receiverhelper.ObsReport) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			writeText(w, http.StatusMethodNotAllowed, "405 method not allowed, supported: [POST]")
			return
		}
		enc, ok := requestEncoding(req.Header.Get("Content-Type"))
		if !ok {
			writeText(w, http.StatusUnsupportedMediaType,
				"415 unsupported media type, supported: ["+jsonContentType+", "+protoContentType+"]")
			return
		}

		hint := 0
		if req.ContentLength > 0 {
			hint = int(min(req.ContentLength, maxPooledBuf))
		}
		buf := getBuf(hint)
		defer putBuf(buf)
		body, err := readAll(*buf, req.Body)
		*buf = body
		if err != nil {
			code := http.StatusBadRequest
			if errors.As(err, new(*http.MaxBytesError)) {
				code = http.StatusRequestEntityTooLarge
			}
			writeStatus(w, enc, code, httpStatus(code, err.Error()))
			return
		}

		if err := consume(req.Context(), obs, enc, body); err != nil {
			s := errorStatus(err)
			writeStatus(w, enc, httpStatusCode(s), s)
			return
		}
		writeResponse(w, enc.contentType(), http.StatusOK, enc.emptyResponse())
	}
}

// requestEncoding reads a Content-Type, ignoring its parameters.
func requestEncoding(contentType string) (encoding, bool) {
	mediaType, _, _ := strings.Cut(contentType, ";")
	switch mediaType = strings.TrimSpace(mediaType); {
	case strings.EqualFold(mediaType, protoContentType):
		return encProto, true
	case strings.EqualFold(mediaType, jsonContentType):
		return encJSON, true
	}
	return 0, false
}

// errorHandler answers errors confighttp finds before the handler runs
// (undecodable Content-Encoding, failed auth) with an OTLP status.
func errorHandler(w http.ResponseWriter, req *http.Request, msg string, code int) {
	enc, ok := requestEncoding(req.Header.Get("Content-Type"))
	if !ok {
		enc = encJSON
	}
	writeStatus(w, enc, code, httpStatus(code, msg))
}

// writeStatus writes an error response: a google.rpc.Status in the
// request's encoding, with Retry-After when a throttled pipeline said how
// long to wait.
func writeStatus(w http.ResponseWriter, enc encoding, code int, s *status.Status) {
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		if ri := retryDelay(s); ri != nil {
			w.Header().Set("Retry-After", strconv.FormatInt(int64(ri.GetRetryDelay().AsDuration()/time.Second), 10))
		}
	}
	st := s.Proto()
	st.Message = strings.ToValidUTF8(st.Message, "\uFFFD") // protojson refuses invalid UTF-8
	msg, err := enc.marshalStatus(st)
	if err != nil { // cannot happen with valid UTF-8; the code still holds
		writeText(w, code, http.StatusText(code))
		return
	}
	writeResponse(w, enc.contentType(), code, msg)
}

func writeText(w http.ResponseWriter, code int, msg string) {
	writeResponse(w, "text/plain", code, []byte(msg))
}

func writeResponse(w http.ResponseWriter, contentType string, code int, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write(body) // the client is gone; nothing to do
}
