package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// scrapeLatencies GETs /metrics at once and then every interval until stop
// is closed (or ctx is done), the way Prometheus scrapes (a kept-alive
// connection, gzip when the transport asks for it, the whole body read),
// and returns each successful scrape's latency, from sending the request
// to the body's last byte, and the errors of the failed ones. A scrape
// that outlasts the interval delays the next (the ticker drops ticks):
// there is at most one scrape in flight, and one in flight when stop
// closes is finished and counted.
func (c *client) scrapeLatencies(ctx context.Context, stop <-chan struct{}, interval time.Duration) (lat []time.Duration, errs []string) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		d, err := c.scrapeOnce(ctx)
		switch {
		case err == nil:
			lat = append(lat, d)
		case ctx.Err() == nil: // not the benchmark being cancelled
			errs = append(errs, err.Error())
		}
		select {
		case <-stop:
			return lat, errs
		case <-ctx.Done():
			return lat, errs
		case <-t.C:
		}
	}
}

// scrapeOnce times one GET /metrics. The default transport asks for gzip
// and decompresses, as a Prometheus server's scrape would have it.
func (c *client) scrapeOnce(ctx context.Context) (time.Duration, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, errorFrom(resp)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, fmt.Errorf("reading /metrics: %w", err)
	}
	return time.Since(t0), nil
}
