// Package exoscale serves Exoscale SKS nodepools and plain instance pools to the
// Cluster Autoscaler through the externalgrpc protocol. Groups are discovered
// eagerly at Refresh with three list calls and every read is answered from that
// snapshot; scale and evict requests are submitted and tracked, never awaited.
package exoscale

import "time"

// ProviderName is the name the provider registers under.
const ProviderName = "exoscale"

// ProviderIDPrefix is what the Exoscale CCM puts before the instance UUID in
// spec.providerID.
const ProviderIDPrefix = "exoscale://"

// placeholderPrefix marks instances a failed scale-up never created
// ("exoscale://pending/<group>/failed-<n>"). The "/" keeps it from ever
// parsing as a real instance id.
const placeholderPrefix = ProviderIDPrefix + "pending/"

// failedSlotPrefix starts the last segment of a failed placeholder's id.
const failedSlotPrefix = "failed-"

// Environment variables read by the provider.
const (
	EnvAPIKey    = "EXOSCALE_API_KEY"
	EnvAPISecret = "EXOSCALE_API_SECRET"
	EnvZone      = "EXOSCALE_ZONE"
	// EnvAPIKeyFile and EnvAPISecretFile name files holding the key pair
	// (mounted Secrets), used when the plain variables are empty.
	EnvAPIKeyFile     = "EXOSCALE_API_KEY_FILE"
	EnvAPISecretFile  = "EXOSCALE_API_SECRET_FILE"
	EnvAPIEnvironment = "EXOSCALE_API_ENVIRONMENT"
	// EnvAPIEndpoint overrides the full v2 base URL (e.g. for tests); unlike the
	// Exoscale CCM's variable of the same name it must include "/v2".
	EnvAPIEndpoint = "EXOSCALE_API_ENDPOINT"
	// EnvSKSCluster names (id or name) the SKS cluster whose nodepools are all groups.
	EnvSKSCluster = "EXOSCALE_SKS_CLUSTER"
	// EnvUnlimitedMaxSize is the max size used when the instance quota is unlimited.
	EnvUnlimitedMaxSize = "EXOSCALE_UNLIMITED_MAX_SIZE"
	// EnvRefreshInterval is the minimum time between two cloud refreshes.
	EnvRefreshInterval = "EXOSCALE_REFRESH_INTERVAL"
	// EnvLearnPools says whether an instance pool becomes a node group when
	// a node lookup finds one of its members (true by default, as upstream).
	EnvLearnPools = "EXOSCALE_LEARN_POOLS"
	// EnvLearntPoolBounds is min:max for the pools learnt that way.
	EnvLearntPoolBounds = "EXOSCALE_LEARNT_POOL_BOUNDS"
)

// QuotaTTL is how long the provider serves the instance quota it read
// before reading it again: a test that changes the quota moves its clock
// past it.
const QuotaTTL = 10 * time.Minute

// Defaults.
const (
	defaultAPIEnvironment = "api"
	// endpointFormat builds https://<environment>-<zone>.exoscale.com/v2 like upstream.
	endpointFormat          = "https://%s-%s.exoscale.com/v2"
	defaultUnlimitedMaxSize = 100
	defaultRefreshInterval  = 5 * time.Second
	// quotaTTL: the instance quota limit changes rarely; it only sets default maxima.
	quotaTTL = QuotaTTL
	// staleOperation: an operation still pending after this long is dropped
	// and the cloud's size is trusted again.
	staleOperation = time.Hour
	// defaultMinSize is upstream's minimum for groups without a --nodes spec
	// (a learnt pool's too, unless EXOSCALE_LEARNT_POOL_BOUNDS says).
	defaultMinSize = 1
)

// Node label keys used for templates (well-known ones are corev1's).
const (
	// LabelGPUType marks GPU nodes; its value is the instance-type family. Real
	// nodes carry it only if the nodepool's labels set it (see docs).
	LabelGPUType = "autoscaler.ca-providers.io/exoscale-gpu-type"
)

// Instance error codes reported to CA (used as metric labels there).
const (
	errorCodeInstance      = "exoscale-instance-error"
	errorCodeQuota         = "exoscale-quota-exceeded"
	errorCodeOperationBase = "exoscale-operation-"
)

// Where per-group settings are read (docs/group-settings.md). SKS nodepool
// labels become node labels, so they take the node-label spelling; a plain
// instance pool's labels stay in the cloud and take the AWS spelling.
const (
	settingsSourceNodepool = "SKS nodepool labels"
	settingsSourcePool     = "instance pool labels"
)
