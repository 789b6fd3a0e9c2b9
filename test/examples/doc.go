// Package examples checks the deployment examples in examples/ (one folder
// per provider, the Helm values and the shared components); it has no code.
// Its tests run in examples/: they decode every manifest strictly, build
// every kustomization, check that names, keys, paths and addresses agree,
// and run the provider's real flag parser on the provider containers'
// arguments with --check-config.
package examples
