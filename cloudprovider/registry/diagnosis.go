package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

// Endpoint is where a provider's calls go and what the operator sets to
// change it, so the advice for a failed call fits the provider: Vultr has
// one host and no zone, Exoscale's zone decides its host, and Volcengine's
// one gateway serves every region.
type Endpoint struct {
	// Host is the API host calls go to.
	Host string
	// Setting is where the operator overrides it
	// ("api_url in --cloud-config").
	Setting string
	// Overridden says Host comes from Setting.
	Overridden bool
	// ByLocation says the zone or region decides Host (when not
	// overridden).
	ByLocation bool
	// Credentials names where the key is set, for a refused key.
	Credentials string
	// IDs names the settings holding the ids calls are made for, for a 404.
	IDs string
}

// PermissionsPage is the documentation of a provider's permissions: every
// action it calls, required or optional, and the example policy.
func PermissionsPage(provider string) string {
	return "docs/providers/" + provider + ".md#permissions"
}

// Known reports whether the location is in the published list; a location
// without a list, or without a name, counts as known.
func (l Location) Known() bool {
	return l.Name == "" || len(l.Published) == 0 || slices.Contains(l.Published, l.Name)
}

// Warning checks the zone or region without a cloud call and returns the
// warning --check-config and preflight print, or "". An unknown location is
// a warning, not an error: the cloud may have opened it after this release.
func (l Location) Warning(provider string) string {
	if l.Known() {
		return ""
	}
	return fmt.Sprintf("%s %q (%s) is not a known %s %s (known: %s): check the spelling; a %s opened after this release works and only warns",
		l.Kind, l.Name, l.Setting, provider, l.Kind, strings.Join(l.Published, ", "), l.Kind)
}

// ConfigWarnings are the warnings of a configuration r's provider accepts,
// found without a cloud call: its zone or region outside the published
// list (Location.Warning), then what r.Warnings says.
func (r Registration) ConfigWarnings(provider string, opts BuildOptions) []string {
	var warnings []string
	if r.Location != nil {
		if w := r.Location(opts).Warning(provider); w != "" {
			warnings = append(warnings, w)
		}
	}
	if r.Warnings != nil {
		warnings = append(warnings, r.Warnings(opts)...)
	}
	return warnings
}

// Diagnosis describes a failed call in one line: the step, the cause with
// the chained error, and the fix for this provider. The cause comes from
// cloudhttp.Diagnose; ok is false when it cannot name one (the provider's
// own error), and the caller prints the error as it is.
func Diagnosis(provider string, f cloudhttp.Failure, loc Location, ep Endpoint) (string, bool) {
	step := provider + ": "
	if f.Operation != "" {
		step += f.Operation + ": "
	}
	host := f.Host
	if host == "" {
		host = ep.Host
	}
	if host == "" {
		host = "the cloud API"
	}
	cause := ""
	if f.Cause != nil {
		cause = " (" + f.Cause.Error() + ")"
	}
	switch f.Kind {
	case cloudhttp.FailureDNS:
		return step + fmt.Sprintf("the API host %s does not resolve%s: %s", host, cause, ep.reach(loc, "check the name and this machine's DNS")), true
	case cloudhttp.FailureRefused:
		return step + fmt.Sprintf("nothing accepts connections at %s%s: %s", host, cause, ep.reach(loc, "check the network path (firewall, egress policy) to it")), true
	case cloudhttp.FailureTLS:
		return step + fmt.Sprintf("TLS with %s failed%s: %s", host, cause, ep.reach(loc, "a proxy or gateway that inspects TLS needs its CA in this machine's trust store (SSL_CERT_FILE)")), true
	case cloudhttp.FailureTimeout:
		return step + fmt.Sprintf("no answer from %s in time%s: %s", host, cause, ep.reach(loc, "check the network path (firewall, egress policy, proxy) to it")), true
	case cloudhttp.FailureProxy:
		return step + fmt.Sprintf("the proxy %s (HTTPS_PROXY/HTTP_PROXY) failed%s: check the proxy, or exclude %s with NO_PROXY", host, cause, ep.Host), true
	case cloudhttp.FailureNoAnswer:
		return step + fmt.Sprintf("no answer from %s%s: %s", host, cause, ep.reach(loc, "check the network path to it")), true
	case cloudhttp.FailureUnauthenticated:
		if ep.Credentials == "" {
			ep.Credentials = "the key and secret"
		}
		return step + fmt.Sprintf("authentication failed: the cloud refused the credentials (%s): check %s", f.Answer(), ep.Credentials), true
	case cloudhttp.FailurePermission:
		return step + fmt.Sprintf("permission refused (%s): grant the key this read permission, as %s lists", f.Answer(), PermissionsPage(provider)), true
	case cloudhttp.FailureNotFound:
		if ep.IDs == "" {
			ep.IDs = "the configuration and --nodes"
		}
		return step + fmt.Sprintf("the cloud knows no such resource (%s): check the id in %s", f.Answer(), ep.IDs), true
	}
	return "", false
}

// reach is the fix for a call that got no answer: check the override when
// there is one, else the zone's endpoint when the zone decides the host,
// else the provider's one host.
func (ep Endpoint) reach(loc Location, general string) string {
	switch {
	case ep.Host == "":
		return general
	case ep.Overridden:
		return fmt.Sprintf("%s sets this host: check it; %s", ep.Setting, general)
	case ep.ByLocation && loc.Name != "" && !loc.Known():
		return fmt.Sprintf("%s %q is not a known %s (its endpoint would be %s): check %s", loc.Kind, loc.Name, loc.Kind, ep.Host, loc.Setting)
	case ep.ByLocation && loc.Name != "":
		return fmt.Sprintf("%s %s's endpoint is %s: %s", loc.Kind, loc.Name, ep.Host, general)
	}
	return fmt.Sprintf("calls go to %s (%s overrides it): %s", ep.Host, ep.Setting, general)
}
