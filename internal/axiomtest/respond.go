package axiomtest

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
)

// answer is a complete response. Routes build it and serveAPI records the
// request before sending it, so a client never sees an answer that
// Requests, Events or Stats do not reflect yet.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) write(w http.ResponseWriter) {
	for k, vs := range a.header {
		w.Header()[k] = append([]string(nil), vs...)
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

func jsonAnswer(code int, body []byte) answer {
	return answer{status: code, header: http.Header{"Content-Type": {"application/json"}}, body: body}
}

// errorAnswer is Axiom's API error shape: {"code":N,"message":"..."}.
func errorAnswer(code int, message string) answer {
	return jsonAnswer(code, []byte(`{"code":`+strconv.Itoa(code)+`,"message":`+quote(message)+"}"))
}

// messageAnswer is the minimal error shape {"message":"..."} that Axiom's
// ingest service uses for bad payloads.
func messageAnswer(code int, message string) answer {
	return jsonAnswer(code, []byte(`{"message":`+quote(message)+"}"))
}

// bodyErrorAnswer answers a refused request body.
func bodyErrorAnswer(err error) answer {
	var be *bodyError
	if errors.As(err, &be) {
		return messageAnswer(be.status, be.msg)
	}
	return messageAnswer(http.StatusBadRequest, err.Error())
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// overlay puts a Status-0 fault's headers and body over a normal answer.
func (a answer) overlay(f Fault) answer {
	if len(f.Header) > 0 {
		h := a.header.Clone()
		if h == nil {
			h = http.Header{}
		}
		for k, vs := range f.Header {
			h[k] = vs
		}
		a.header = h
	}
	if f.Body != "" {
		a.body = []byte(f.Body)
	}
	return a
}

func faultAnswer(f Fault) answer {
	return answer{status: f.Status, header: f.Header, body: []byte(f.Body)}
}

// dropConnection closes the TCP connection with SO_LINGER 0, so the client
// sees a reset rather than an orderly EOF, and net/http writes no answer.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("axiomtest: connection cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// newTraceID is the value of X-Axiom-Trace-Id, which axiom-go copies into
// Status.TraceID and HTTPError.TraceID.
func newTraceID() string {
	var b [16]byte
	for i := 0; i < len(b); i += 8 {
		v := rand.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return hex.EncodeToString(b[:])
}
