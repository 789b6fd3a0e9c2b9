// Package credential holds the cloud credentials a provider reads: a Secret
// that never prints its value, and a Credential read from the environment or
// from a file that is re-read when it changes, so a rotated key needs no
// restart. ScrubSecrets removes known secret values from text that may be
// logged.
package credential
