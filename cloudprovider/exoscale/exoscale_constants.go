// Package exoscale serves Exoscale SKS nodepools and plain instance pools as
// node groups, answering reads from the snapshot Refresh takes.
package exoscale

import "time"

// ProviderName is the name the provider registers under.
const ProviderName = "exoscale"

// ProviderIDPrefix precedes the instance UUID in the Exoscale CCM's providerIDs.
const ProviderIDPrefix = "exoscale://"

// placeholderPrefix starts a failed slot's providerID,
// exoscale://pending/<group>/failed-<n>, which never parses as an instance id.
const placeholderPrefix = ProviderIDPrefix + "pending/"

// failedSlotPrefix starts the last segment of a failed placeholder's id.
const failedSlotPrefix = "failed-"

// Environment variables read by the provider.
const (
	EnvAPIKey    = "EXOSCALE_API_KEY"
	EnvAPISecret = "EXOSCALE_API_SECRET"
	EnvZone      = "EXOSCALE_ZONE"
	// EnvAPIKeyFile and EnvAPISecretFile name files holding the key pair.
	EnvAPIKeyFile     = "EXOSCALE_API_KEY_FILE"
	EnvAPISecretFile  = "EXOSCALE_API_SECRET_FILE"
	EnvAPIEnvironment = "EXOSCALE_API_ENVIRONMENT"
	// EnvAPIEndpoint overrides the v2 base URL; unlike the Exoscale CCM's
	// variable of the same name it must include "/v2".
	EnvAPIEndpoint = "EXOSCALE_API_ENDPOINT"
	// EnvSKSCluster is the SKS cluster (id or name) whose nodepools are all groups.
	EnvSKSCluster = "EXOSCALE_SKS_CLUSTER"
	// EnvUnlimitedMaxSize is the max size used when the instance quota is unlimited.
	EnvUnlimitedMaxSize = "EXOSCALE_UNLIMITED_MAX_SIZE"
	// EnvRefreshInterval is the minimum time between two cloud refreshes.
	EnvRefreshInterval = "EXOSCALE_REFRESH_INTERVAL"
	// EnvLearnPools: a pool whose member a node lookup finds becomes a group.
	EnvLearnPools = "EXOSCALE_LEARN_POOLS"
	// EnvLearntPoolBounds is min:max for the pools learnt that way.
	EnvLearntPoolBounds = "EXOSCALE_LEARNT_POOL_BOUNDS"
)

// QuotaTTL is how long the instance quota read is served before a re-read.
const QuotaTTL = 10 * time.Minute

// Defaults.
const (
	defaultAPIEnvironment = "api"
	// endpointFormat takes the environment and the zone.
	endpointFormat          = "https://%s-%s.exoscale.com/v2"
	defaultUnlimitedMaxSize = 100
	defaultRefreshInterval  = 5 * time.Second
	// quotaTTL: the quota limit changes rarely and only sets default maxima.
	quotaTTL = QuotaTTL
	// staleOperation: a pending operation older than this is dropped.
	staleOperation = time.Hour
	// defaultMinSize is the min of a group without a spec or learnt bounds, as upstream.
	defaultMinSize = 1
)

// Node label keys used for templates (well-known ones are corev1's).
const (
	// LabelGPUType marks GPU nodes with the instance-type family. Real nodes
	// carry it only if the nodepool's labels set it.
	LabelGPUType = "autoscaler.ca-providers.io/exoscale-gpu-type"
)

// Instance error codes reported to CA (used as metric labels there).
const (
	errorCodeInstance      = "exoscale-instance-error"
	errorCodeQuota         = "exoscale-quota-exceeded"
	errorCodeOperationBase = "exoscale-operation-"
)

// Where per-group settings are read. SKS copies nodepool labels to nodes, so
// they take the node-label spelling; pool labels take the AWS spelling.
const (
	settingsSourceNodepool = "SKS nodepool labels"
	settingsSourcePool     = "instance pool labels"
)
