package transport

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// connectDialer dials addr through the HTTP CONNECT proxy at proxyURL
// (http://host:port, checked by the intent parser), as gRPC's own proxy
// support does (grpc-go internal/transport/proxy.go: a CONNECT request, a
// 200 reply, then the tunnel), but only for the proxy the intent names.
func connectDialer(proxyURL string) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		u, err := url.Parse(proxyURL)
		if err != nil {
			return nil, fmt.Errorf("proxy %q: %w", proxyURL, err)
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", u.Host, err)
		}
		if dl, ok := ctx.Deadline(); ok {
			_ = c.SetDeadline(dl)
		}
		req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Host: addr}, Host: addr, Header: http.Header{}}
		req = req.WithContext(ctx)
		if err := req.Write(c); err != nil {
			c.Close()
			return nil, fmt.Errorf("proxy %s: CONNECT %s: %w", u.Host, addr, err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("proxy %s: CONNECT %s: %w", u.Host, addr, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.Close()
			return nil, fmt.Errorf("proxy %s: CONNECT %s: %s", u.Host, addr, resp.Status)
		}
		_ = c.SetDeadline(time.Time{})
		if br.Buffered() > 0 {
			return &bufferedConn{Conn: c, r: br}, nil
		}
		return c, nil
	}
}

// bufferedConn is a tunnel whose first bytes the CONNECT reply's reader
// already holds.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }
