package axiomtest

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
)

// writeError answers like Axiom's API errors: {"code":N,"message":"..."}.
func writeError(w http.ResponseWriter, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, `{"code":`+strconv.Itoa(code)+`,"message":`+quote(message)+"}")
}

// writeMessage answers with the minimal error shape {"message":"..."} that
// Axiom's ingest service uses for bad payloads.
func writeMessage(w http.ResponseWriter, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, `{"message":`+quote(message)+"}")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeFault(w http.ResponseWriter, f Fault) {
	for k, vs := range f.Header {
		w.Header()[k] = append([]string(nil), vs...)
	}
	w.WriteHeader(f.Status)
	_, _ = io.WriteString(w, f.Body)
}

// resetConnection reads the request, then closes the TCP connection with
// SO_LINGER 0 so the client sees a reset, not an orderly EOF.
func resetConnection(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("axiomtest: connection cannot be hijacked for a reset")
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
