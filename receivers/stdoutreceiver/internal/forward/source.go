package forward

import "io"

// source is the client connection as the decoder reads it. Before a read
// would wait for the client, it lets the connection hand what it decoded to
// the Sink (and write the acks owed): a batch is never held while waiting
// for input longer than one short pause, and is as large as whatever the
// client wrote meanwhile.
type source struct {
	r io.Reader
	// tryRead reads without waiting; ok is false when nothing is there.
	// nil when the reader cannot tell (a plain io.Reader in tests).
	tryRead func(p []byte) (n int, err error, ok bool)
	// hold reports, when nothing is there, whether to pause until the next
	// tick and look again, and pauses if so; delivered is set once the
	// batch went to the Sink.
	hold func(delivered bool) bool
	// resumed tells the connection whether its pause brought input, and
	// not more than one read takes.
	resumed func(got bool)
	// beforeWait delivers the batch before a wait for the client.
	beforeWait func() error
	// beforeBlock runs just before a read that waits in the poller.
	beforeBlock func()
	// waitRead is that read when it can be made without telling the
	// scheduler (see newWaitRead); nil: r.Read.
	waitRead func(p []byte) (int, error)
	// carry is read before the client: what the read buffer the
	// connection left still held (conn.fitReadBuffer).
	carry []byte
	// full is set when the last read of the client filled the buffer: it
	// holds more, the client is ahead.
	full bool
}

func (s *source) Read(p []byte) (int, error) {
	if len(s.carry) > 0 {
		n := copy(p, s.carry)
		s.carry = s.carry[n:]
		return n, nil
	}
	n, err := s.read(p)
	s.full = n > 0 && n == len(p)
	return n, err
}

func (s *source) read(p []byte) (int, error) {
	if s.tryRead != nil {
		if n, err, ok := s.tryRead(p); ok {
			return n, err
		}
		if n, err, ok := s.pauseAndRead(p, false); ok {
			return n, err
		}
	}
	if err := s.beforeWait(); err != nil {
		return 0, err
	}
	if s.tryRead != nil {
		if n, err, ok := s.pauseAndRead(p, true); ok {
			return n, err
		}
		s.beforeBlock()
	}
	if s.waitRead != nil {
		return s.waitRead(p)
	}
	return s.r.Read(p)
}

// pauseAndRead pauses if the connection holds (see conn.hold) and reads
// what came meanwhile.
func (s *source) pauseAndRead(p []byte, delivered bool) (int, error, bool) {
	if !s.hold(delivered) {
		return 0, nil, false
	}
	n, err, ok := s.tryRead(p)
	// A read that filled p may have left more behind: the client sends
	// faster than a tick's pause should let its socket fill up.
	s.resumed(ok && n > 0 && n < len(p))
	return n, err, ok
}
