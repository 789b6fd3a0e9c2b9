package main

// release is this version of the provider, the newest entry of
// CHANGELOG.md (a test keeps them equal). --version prints it, and make
// build stamps it unless VERSION is given.
const release = "v0.6.0"
