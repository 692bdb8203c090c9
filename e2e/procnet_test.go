package e2e

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// inetSocket is one of a process's TCP or UDP sockets, from /proc.
type inetSocket struct {
	proto         string // tcp, tcp6, udp, udp6
	local, remote netip.AddrPort
	listening     bool
}

func (s inetSocket) String() string {
	if s.listening {
		return fmt.Sprintf("%s listening on %s", s.proto, s.local)
	}
	return fmt.Sprintf("%s %s -> %s", s.proto, s.local, s.remote)
}

// processSockets lists the TCP and UDP sockets that process pid holds open:
// its socket file descriptors matched by inode against its network
// namespace's tables. Unix sockets are not listed.
func processSockets(pid int) ([]inetSocket, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []inetSocket
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, proto))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			local, err1 := procAddr(fields[1])
			remote, err2 := procAddr(fields[2])
			if err1 != nil || err2 != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %v %v", proto, err1, err2)
			}
			// TCP state 0A is LISTEN; an unconnected UDP socket (07) has no peer.
			listening := (strings.HasPrefix(proto, "tcp") && fields[3] == "0A")
			out = append(out, inetSocket{proto: proto, local: local, remote: remote, listening: listening})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// procAddr parses /proc/net's "0100007F:1F90": the address as host-order
// 32-bit words in hex, and the port in hex.
func procAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 { // each 32-bit word is little-endian
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", s)
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(p)), nil
}
