package httpapi

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConnections is the connection cap when none is configured.
const DefaultMaxConnections = 1024

// rejectResponse is what a connection above the cap receives before it is
// closed: a complete HTTP/1.1 503 with the OpenAI error envelope, so a
// client (or a balancer) sees an answer, not a reset, and may retry.
const rejectBody = `{"error":{"message":"too many open connections; retry later","type":"ServiceUnavailableError","param":null,"code":503}}` + "\n"

var rejectResponse = []byte("HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\n" +
	"Retry-After: 1\r\n" +
	"Connection: close\r\n" +
	"Content-Length: " + itoa(int64(len(rejectBody))) + "\r\n\r\n" + rejectBody)

// LimitListener caps the connections ln has open at once at max (idle
// keep-alive connections count too). A connection above the cap is
// answered 503 with Retry-After and closed at once; Accept goes on
// serving the others. max ≤ 0 means DefaultMaxConnections.
func LimitListener(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	return &limitListener{Listener: ln, max: int64(max)}
}

type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &limitConn{Conn: c, release: func() { l.open.Add(-1) }}, nil
		}
		l.open.Add(-1)
		go reject(c)
	}
}

// reject answers c 503 and closes it. It first reads the request head (up
// to a second, 64 KiB): an answer written before the client sent anything
// is "unsolicited" to HTTP clients, which drop it as a broken connection.
// After the answer the write side is shut and what the client still sends
// is drained for a moment: closing a socket with unread data makes the
// kernel send a reset, which can reach the client before the answer does.
func reject(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	readUntil(c, []byte("\r\n\r\n"))
	if _, err := c.Write(rejectResponse); err != nil {
		return
	}
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	readUntil(c, nil)
}

// readUntil reads c until it has seen end (nil: never), an error, or 64 KiB.
func readUntil(c net.Conn, end []byte) {
	var buf [4096]byte
	var tail []byte
	for n := 0; n < 1<<16; {
		k, err := c.Read(buf[:])
		if err != nil {
			return
		}
		n += k
		if end != nil {
			tail = append(tail, buf[:k]...)
			if bytes.Contains(tail, end) {
				return
			}
			tail = tail[max(0, len(tail)-len(end)):]
		}
	}
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
