//go:build load

package load

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on Linux).
const clockTicks = 100

// ProcStats is what /proc says about a process.
type ProcStats struct {
	RSS, HWM int64         // VmRSS, VmHWM in bytes
	CPU      time.Duration // utime + stime
}

// ReadProc reads /proc/<pid>/status and /proc/<pid>/stat.
func ReadProc(pid int) (ProcStats, error) {
	var s ProcStats
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			s.RSS = v << 10
		case "VmHWM:":
			s.HWM = v << 10
		}
	}
	b, err = os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// The command name (field 2) may hold spaces; the fields after it are fixed.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return s, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return s, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.CPU = time.Duration(ut+st) * time.Second / clockTicks
	return s, nil
}

// Scrape fetches url with gzip, as Prometheus asks, and returns the decompressed body and how
// long the response took to its last (compressed) byte: the server's rendering, compression and
// sending, not the harness's decompression, which comes after the clock stops.
func Scrape(c *http.Client, url string) ([]byte, time.Duration, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	// Set by hand, the Transport no longer decompresses transparently.
	req.Header.Set("Accept-Encoding", "gzip")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return nil, took, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, took, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, took, fmt.Errorf("GET %s: %w", url, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, took, fmt.Errorf("GET %s: %w", url, err)
		}
	}
	return b, took, nil
}

// SumSamples sums the values of the samples of metric name whose label text contains every
// string of match (e.g. `reason="LoadProbe"`). It reads the text exposition line by line.
func SumSamples(body []byte, name string, match ...string) (float64, bool) {
	var sum float64
	found := false
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		if !bytes.HasPrefix(line, []byte(name)) || len(line) <= len(name) || (line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		ok := true
		for _, m := range match {
			if !bytes.Contains(line, []byte(m)) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		rest := line[len(name):]
		if rest[0] == '{' {
			rest = rest[bytes.LastIndexByte(rest, '}')+1:]
		}
		f := strings.Fields(string(rest))
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

// HistogramQuantile is the q-quantile of a Prometheus histogram in a text exposition,
// interpolated linearly inside the bucket as histogram_quantile does.
func HistogramQuantile(body []byte, name string, q float64) (float64, bool) {
	type bucket struct{ le, n float64 }
	var bs []bucket
	prefix := []byte(name + `_bucket{le="`)
	for _, line := range bytes.Split(body, []byte("\n")) {
		if !bytes.HasPrefix(line, prefix) {
			continue
		}
		rest := line[len(prefix):]
		j := bytes.IndexByte(rest, '"')
		if j < 0 {
			continue
		}
		le, err := strconv.ParseFloat(string(rest[:j]), 64)
		if err != nil {
			continue
		}
		f := strings.Fields(string(rest[j:]))
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		bs = append(bs, bucket{le, n})
	}
	if len(bs) == 0 || bs[len(bs)-1].n == 0 {
		return 0, false
	}
	rank := q * bs[len(bs)-1].n
	lo, nlo := 0.0, 0.0
	for _, b := range bs {
		if b.n >= rank {
			if b.le > 1e300 { // +Inf: the highest finite bound, as histogram_quantile
				return lo, true
			}
			if b.n == nlo {
				return b.le, true
			}
			return lo + (b.le-lo)*(rank-nlo)/(b.n-nlo), true
		}
		lo, nlo = b.le, b.n
	}
	return lo, true
}

// medianScrape scrapes url n times (gzip) and returns the median time in milliseconds, every
// time, and the size of the last (decompressed) exposition.
func medianScrape(c *http.Client, url string, n int) (ms float64, times []float64, size int, err error) {
	for i := 0; i < n; i++ {
		b, took, err := Scrape(c, url)
		if err != nil {
			return 0, times, 0, err
		}
		times = append(times, float64(took.Microseconds())/1000)
		size = len(b)
	}
	return median(times), times, size, nil
}
