package fakeapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Action names served by the fake.
const (
	ActionDescribeScalingGroups         = "DescribeScalingGroups"
	ActionDescribeScalingInstances      = "DescribeScalingInstances"
	ActionDescribeScalingConfigurations = "DescribeScalingConfigurations"
	ActionDescribeScalingActivities     = "DescribeScalingActivities"
	ActionModifyScalingGroup            = "ModifyScalingGroup"
	ActionRemoveInstances               = "RemoveInstances"
	ActionDescribeInstanceTypes         = "DescribeInstanceTypes"
	ActionDescribeImages                = "DescribeImages"
	ActionDescribeSubnets               = "DescribeSubnets"
)

// service is one OpenAPI service: the gateway routes an action only with its
// service's version, and names the service in ResponseMetadata.
type service struct{ version, name string }

var (
	autoScaling = service{version: "2020-01-01", name: "auto_scaling"}
	ecs         = service{version: "2020-04-01", name: "ecs"}
	vpc         = service{version: "2020-04-01", name: "vpc"}
)

// handlerFunc answers one action with its Result, or refuses it. It runs
// with s.mu held.
type handlerFunc func(s *Server, r *params) (any, *apiError)

var handlers = map[string]struct {
	service
	fn handlerFunc
}{
	ActionDescribeScalingGroups:         {autoScaling, (*Server).describeScalingGroups},
	ActionDescribeScalingInstances:      {autoScaling, (*Server).describeScalingInstances},
	ActionDescribeScalingConfigurations: {autoScaling, (*Server).describeScalingConfigurations},
	ActionDescribeScalingActivities:     {autoScaling, (*Server).describeScalingActivities},
	ActionModifyScalingGroup:            {autoScaling, (*Server).modifyScalingGroup},
	ActionRemoveInstances:               {autoScaling, (*Server).removeInstances},
	ActionDescribeInstanceTypes:         {ecs, (*Server).describeInstanceTypes},
	ActionDescribeImages:                {ecs, (*Server).describeImages},
	ActionDescribeSubnets:               {vpc, (*Server).describeSubnets},
}

// actionOf returns the request's Action, the fake's operation name.
func actionOf(r *http.Request, _ []byte) string {
	return requestValues(r).Get("Action")
}

// requestValues returns the query, or the form of a form POST.
func requestValues(r *http.Request) url.Values {
	if r.Method == http.MethodPost {
		// The SDK only sends GET, but a form POST is harmless to accept.
		if err := r.ParseForm(); err == nil {
			return r.Form
		}
	}
	return r.URL.Query()
}

// serve answers one request the way the OpenAPI gateway does.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	q := requestValues(r)
	action := q.Get("Action")
	version := q.Get("Version")

	s.mu.Lock()
	result, aerr := s.dispatchLocked(r, q)
	requestID := s.nextID("req-")
	s.mu.Unlock()

	region := s.opts.Region
	if _, signed := parseCredential(r.Header.Get("Authorization")); !s.serves(signed) {
		region = signed
	}
	writeEnvelope(w, map[string]any{
		"RequestId": requestID,
		"Action":    action,
		"Version":   version,
		"Service":   handlers[action].name,
		"Region":    region,
	}, result, aerr)
}

// dispatchLocked checks what the gateway checks before any service sees the
// request (path, signature, access key, region, action and version, the
// key's policy), then
// runs the action's handler.
func (s *Server) dispatchLocked(r *http.Request, q url.Values) (any, *apiError) {
	action := q.Get("Action")
	version := q.Get("Version")
	switch {
	case r.URL.Path != "/":
		return nil, errf(http.StatusNotFound, "InvalidActionOrVersion", "path %s not found", r.URL.Path)
	case r.Header.Get("Authorization") == "":
		return nil, errf(http.StatusUnauthorized, "MissingAuthenticationToken", "request is not signed")
	case s.opts.AccessKey != "" && accessKeyOf(r.Header.Get("Authorization")) != s.opts.AccessKey:
		return nil, errf(http.StatusUnauthorized, "InvalidAccessKey", "the access key is not valid")
	}
	_, region := parseCredential(r.Header.Get("Authorization"))
	served := s.serves(region)
	if !served && s.opts.OtherRegion == RefuseRegion {
		return nil, errf(http.StatusBadRequest, codeInvalidRegion, "the region %q is not supported", region)
	}
	h, ok := handlers[action]
	switch {
	case !ok:
		return nil, errf(http.StatusNotFound, "InvalidActionOrVersion", "unknown action %q", action)
	case version != h.version:
		return nil, errf(http.StatusNotFound, "InvalidActionOrVersion", "action %s has no version %q", action, version)
	}
	if aerr := s.refusedLocked(action); aerr != nil {
		return nil, aerr
	}
	if !served {
		// EmptyRegion: the region holds nothing, and nothing done there
		// touches the served region's store.
		return h.fn(newStore(s.opts), &params{q: q})
	}
	s.advanceLocked()
	return h.fn(s, &params{q: q})
}

// serves reports whether the fake serves region (Options.Regions; every
// region when that is empty).
func (s *Server) serves(region string) bool {
	return len(s.opts.Regions) == 0 || slices.Contains(s.opts.Regions, region)
}

// contentType is what the gateway answers with.
const contentType = "application/json; charset=utf-8"

// writeEnvelope answers in the gateway's envelope: meta as ResponseMetadata,
// then either aerr as ResponseMetadata.Error or result as Result.
func writeEnvelope(w http.ResponseWriter, meta map[string]any, result any, aerr *apiError) {
	body := map[string]any{"ResponseMetadata": meta}
	status := http.StatusOK
	if aerr != nil {
		if aerr.status != 0 {
			status = aerr.status
		}
		meta["Error"] = map[string]any{"Code": aerr.code, "Message": aerr.message}
	} else {
		body["Result"] = result
	}
	w.Header().Set("Content-Type", contentType)
	fakecloud.WriteJSON(w, status, body)
}

// writeError writes the gateway's error envelope for an injected fault. The
// real gateway puts some errors (flow limits) in a 200 answer, so status 200
// with a code is an error too.
func (s *Server) writeError(w http.ResponseWriter, status int, code, message string) {
	if code == "" {
		code = defaultErrorCode(status)
	}
	meta := map[string]any{"RequestId": s.requestID(), "Region": s.opts.Region}
	writeEnvelope(w, meta, nil, &apiError{status: status, code: code, message: message})
}

func (s *Server) requestID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextID("req-")
}

// SigningScope returns the service and region a recorded request was signed
// for, from its Authorization header's credential scope.
func SigningScope(r fakecloud.RecordedRequest) (service, region string) {
	return parseCredential(r.Header.Get("Authorization"))
}

// parseCredential pulls service and region out of
// "HMAC-SHA256 Credential=AK/date/region/service/request, ...".
func parseCredential(auth string) (service, region string) {
	i := strings.Index(auth, "Credential=")
	if i < 0 {
		return "", ""
	}
	cred := auth[i+len("Credential="):]
	if j := strings.IndexByte(cred, ','); j >= 0 {
		cred = cred[:j]
	}
	parts := strings.Split(cred, "/")
	if len(parts) < 5 {
		return "", ""
	}
	return parts[3], parts[2]
}

// accessKeyOf pulls the access key out of the Authorization header's
// "Credential=AK/date/region/service/request".
func accessKeyOf(auth string) string {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	ak, _, _ := strings.Cut(cred, "/")
	return ak
}
