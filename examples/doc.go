// Package examples holds the deployment examples, one folder per provider
// plus the shared standalone-mTLS component. It has no code: its tests decode
// every manifest strictly, build every kustomization, check that names, keys,
// paths and addresses agree, and run the provider's real flag parser on the
// provider containers' arguments with --check-config.
package examples
