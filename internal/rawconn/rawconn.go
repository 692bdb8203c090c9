// Package rawconn makes a TCP connection's reads and writes raw system calls
// on Linux, so that the Go scheduler does not hear about them.
//
// net.Conn's Read and Write call read(2) and write(2) through syscall.Syscall,
// which tells the scheduler that a system call has begun (entersyscall). When
// the process was idle, that wakes the runtime's monitor thread (sysmon),
// which then polls every 20 µs for about 50 rounds, each a thread wake-up,
// and with GOMAXPROCS=1 it may hand the P to another thread. Go keeps sockets
// non-blocking, so a read or write never blocks: it returns EAGAIN, and the
// scheduler need not know. The calls here are made inside
// syscall.RawConn's callbacks with syscall.RawSyscall; on EAGAIN the callback
// returns false and the goroutine waits in the network poller, as net.Conn's
// does, so deadlines and Close work as they do there.
//
// The axiom exporter's HTTP client made ~55 such calls a second at 20k
// lines/s (header and body writes, response reads); the OTLP receiver's
// connections (gRPC and HTTP) ~4 an export request. Read, and ReadNow, the
// single read under it, also serve the stdout receiver's Forward
// connections and stdin; they are built for every Unix (ReadNow is there
// the ordinary call), Wrap and Conn for Linux.
package rawconn
