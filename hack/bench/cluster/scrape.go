package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Series is one scraped Prometheus sample: its name, labels and value.
type Series struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape reads a Prometheus text exposition from url. Only what the
// benchmark and tests need is parsed: plain samples with quoted labels.
func Scrape(ctx context.Context, url string) ([]Series, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: status %s", url, resp.Status)
	}
	return ParseText(resp.Body)
}

// ParseText parses the Prometheus text format.
func ParseText(r io.Reader) ([]Series, error) {
	var out []Series
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseLine(line string) (Series, error) {
	s := Series{Labels: map[string]string{}}
	rest := line
	if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
		s.Name = line[:i]
		rest = line[i+1:]
		for {
			rest = strings.TrimLeft(rest, ", ")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, "=\"")
			if eq < 0 {
				return s, fmt.Errorf("bad metric line %q", line)
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var val strings.Builder
			for {
				if rest == "" {
					return s, fmt.Errorf("bad metric line %q", line)
				}
				c := rest[0]
				rest = rest[1:]
				if c == '\\' && rest != "" {
					val.WriteByte(rest[0])
					rest = rest[1:]
					continue
				}
				if c == '"' {
					break
				}
				val.WriteByte(c)
			}
			s.Labels[key] = val.String()
		}
	} else if i >= 0 {
		s.Name = line[:i]
		rest = line[i:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, fmt.Errorf("bad metric line %q", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("bad metric value in %q: %w", line, err)
	}
	s.Value = v
	return s, nil
}

// Sum adds every sample named name whose labels include all of match.
func Sum(series []Series, name string, match map[string]string) float64 {
	var total float64
	for _, s := range series {
		if s.Name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			total += s.Value
		}
	}
	return total
}

// ByLabel adds the samples named name per value of label.
func ByLabel(series []Series, name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range series {
		if s.Name == name {
			out[s.Labels[label]] += s.Value
		}
	}
	return out
}
