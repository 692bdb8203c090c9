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
	// hold reports, when nothing is there, whether to pause once and look
	// again before delivering, and pauses if so.
	hold func() bool
	// beforeWait runs when the next read may block.
	beforeWait func() error
}

func (s *source) Read(p []byte) (int, error) {
	if s.tryRead != nil {
		if n, err, ok := s.tryRead(p); ok {
			return n, err
		}
		if s.hold() {
			if n, err, ok := s.tryRead(p); ok {
				return n, err
			}
		}
	}
	if err := s.beforeWait(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}
