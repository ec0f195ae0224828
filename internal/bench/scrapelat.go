package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// scrapeLatencies GETs /metrics every interval until ctx is done, the way
// Prometheus scrapes (a kept-alive connection, gzip, the whole body read),
// and returns each successful scrape's latency, from sending the request
// to the body's last byte, and the errors of the failed ones. A scrape
// that outlasts the interval delays the next (the ticker drops ticks):
// there is at most one scrape in flight.
func (c *client) scrapeLatencies(ctx context.Context, interval time.Duration) (lat []time.Duration, errs []string) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return lat, errs
		case <-t.C:
		}
		d, err := c.scrapeOnce(ctx)
		switch {
		case err == nil:
			lat = append(lat, d)
		case ctx.Err() == nil: // a scrape cut short by the run's end is not a failure
			errs = append(errs, err.Error())
		}
	}
}

// scrapeOnce times one GET /metrics. The transport asks for gzip and
// decompresses, as a Prometheus server's scrape would have it.
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
