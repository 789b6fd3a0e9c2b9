package groupconfig

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// maxPriceSheetBytes bounds the file read at start-up; a real sheet lists a
// few hundred instance types.
const maxPriceSheetBytes = 1 << 20

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

// PriceSheet is the --price-sheet file: hourly prices per instance type, in
// one currency. Its format is line based:
//
//	# comments and blank lines are ignored
//	currency EUR
//	standard.medium  0.0403
//	standard.large   0.0806
//
// The currency line comes first; then one "<instance type> <hourly price>"
// per line. Prices are positive decimal numbers; every type appears once.
type PriceSheet struct {
	// Path is the file the sheet was read from.
	Path string
	// Currency is the ISO 4217 code of every price (CA's price expander only
	// compares ratios, but mixing currencies would skew them).
	Currency string
	hourly   map[string]float64
}

// LoadPriceSheet reads and validates a price sheet file. The error names the
// file and every problem with its line number.
func LoadPriceSheet(path string) (*PriceSheet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--price-sheet: %w", err)
	}
	defer f.Close()
	return ParsePriceSheet(path, f)
}

// ParsePriceSheet reads a price sheet from r; name is used in errors.
func ParsePriceSheet(name string, r io.Reader) (*PriceSheet, error) {
	s := &PriceSheet{Path: name, hourly: map[string]float64{}}
	var problems []error
	bad := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Errorf("--price-sheet %s line %d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPriceSheetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--price-sheet %s: %w", name, err)
	}
	if len(data) > maxPriceSheetBytes {
		return nil, fmt.Errorf("--price-sheet %s: larger than %d bytes; is it the right file?", name, maxPriceSheetBytes)
	}
	firstLine := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 0, 4096), maxPriceSheetBytes)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "currency" {
			switch {
			case len(fields) != 2 || !currencyPattern.MatchString(fields[1]):
				bad(n, "the currency line is \"currency <ISO 4217 code>\", like \"currency EUR\"")
			case s.Currency != "":
				bad(n, "a second currency line: a sheet has one currency")
			case len(s.hourly) > 0:
				bad(n, "the currency line must come before the prices")
			default:
				s.Currency = fields[1]
			}
			continue
		}
		if len(fields) != 2 {
			bad(n, "expected \"<instance type> <hourly price>\", got %d fields", len(fields))
			continue
		}
		instanceType, text := fields[0], fields[1]
		price, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(price, 0) || math.IsNaN(price) || price <= 0 {
			bad(n, "price %q of %s is not a positive number", text, instanceType)
			continue
		}
		if first, dup := firstLine[instanceType]; dup {
			bad(n, "%s is listed again (first on line %d)", instanceType, first)
			continue
		}
		firstLine[instanceType] = n
		s.hourly[instanceType] = price
	}
	if s.Currency == "" {
		problems = append(problems, fmt.Errorf("--price-sheet %s: no currency line (\"currency EUR\" before the prices)", name))
	}
	if len(s.hourly) == 0 && len(problems) == 0 {
		problems = append(problems, fmt.Errorf("--price-sheet %s: no prices", name))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return s, nil
}

// HourlyPrice returns the hourly price of instanceType, or an error wrapping
// ErrNotFound naming the sheet when it is not listed.
func (s *PriceSheet) HourlyPrice(instanceType string) (float64, error) {
	if p, ok := s.hourly[instanceType]; ok {
		return p, nil
	}
	return 0, cloudprovider.Errorf(cloudprovider.ErrNotFound, "instance type %q is not in the price sheet %s", instanceType, s.Path)
}

// Len returns how many instance types the sheet prices.
func (s *PriceSheet) Len() int { return len(s.hourly) }

// String describes the sheet for logs.
func (s *PriceSheet) String() string {
	return fmt.Sprintf("%s (%d instance types, %s)", s.Path, len(s.hourly), s.Currency)
}
