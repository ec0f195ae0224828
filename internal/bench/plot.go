package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// point is one latency sample at a time since the run began.
type point struct{ t, ms float64 }

// WritePlotSVG draws two scatter panels over the run's time axis: TTFT of
// each request at its start, and every inter-token gap at the time it
// ended.
func (r *Result) WritePlotSVG(w io.Writer) error {
	var ttft, itl []point
	for i := range r.TTFTs {
		start := r.StartTimes[i]
		ttft = append(ttft, point{start, r.TTFTs[i] * 1000})
		t := start + r.TTFTs[i]
		for _, gap := range r.ITLs[i] {
			t += gap
			itl = append(itl, point{t, gap * 1000})
		}
	}
	const width, panelH, margin = 900, 300, 60
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, 2*panelH+2*margin)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	tmax := math.Max(r.Duration, 1e-3)
	panel(&b, "Time to first token (ms) by request start", ttft, tmax, margin, margin/2, width-2*margin, panelH-margin/2, "#1f77b4")
	panel(&b, "Inter-token latency (ms) over time", itl, tmax, margin, panelH+margin, width-2*margin, panelH-margin/2, "#d62728")
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func panel(b *strings.Builder, title string, pts []point, tmax float64, x0, y0, w, h int, color string) {
	ymax := 1e-3
	for _, p := range pts {
		ymax = math.Max(ymax, p.ms)
	}
	ymax *= 1.05
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s (%d samples)</text>`+"\n", x0, y0-8, title, len(pts))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", x0, y0, w, h)
	for i := 0; i <= 4; i++ {
		y := y0 + h - i*h/4
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/><text x="%d" y="%d" text-anchor="end">%.1f</text>`+"\n",
			x0, y, x0+w, y, x0-4, y+4, ymax*float64(i)/4)
		x := x0 + i*w/4
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%.1fs</text>`+"\n", x, y0+h+14, tmax*float64(i)/4)
	}
	for _, p := range pts {
		x := float64(x0) + p.t/tmax*float64(w)
		y := float64(y0+h) - p.ms/ymax*float64(h)
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="1.6" fill="%s" fill-opacity="0.6"/>`+"\n", x, y, color)
	}
}

// SavePlot writes the SVG plot to path.
func (r *Result) SavePlot(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.WritePlotSVG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
