# syntax=docker/dockerfile:1
# The image `make container` builds without a daemon, for those who prefer
# docker build. Same layout: static binary at /cluster-autoscaler-provider,
# CA certificates, passwd/group with user 65532, /tmp, no shell; same
# entrypoint, user and labels (hack/container/dockerfile_test.go checks).
#
#   docker build --build-arg PROVIDER=vultr --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg REVISION=$(git rev-parse HEAD) -t cluster-autoscaler-provider:dev .
#   docker buildx build --platform linux/amd64,linux/arm64 ... --push .
#
# Unlike make container, the CA bundle comes from the golang image rather than
# the build host, so the two digests differ even for the same commit.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
# Set by BuildKit from --platform; the defaults below cover plain docker build.
ARG TARGETOS
ARG TARGETARCH
ARG PROVIDER=all
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN set -eu; \
    tags=""; if [ "$PROVIDER" != all ]; then tags="$PROVIDER"; fi; \
    CGO_ENABLED=0 GOOS="${TARGETOS:-linux}" GOARCH="${TARGETARCH:-amd64}" \
      go build -trimpath -buildvcs=false -tags "$tags" -ldflags "-s -w -X main.version=$VERSION" \
      -o /out/cluster-autoscaler-provider .
RUN set -eu; \
    mkdir -p /rootfs/etc/ssl/certs /rootfs/home/nonroot /rootfs/tmp; \
    cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /rootfs/etc/passwd; \
    printf 'root:x:0:\nnonroot:x:65532:\n' > /rootfs/etc/group; \
    printf 'hosts: files dns\n' > /rootfs/etc/nsswitch.conf; \
    chmod 1777 /rootfs/tmp; chmod 700 /rootfs/home/nonroot; chown 65532:65532 /rootfs/home/nonroot

FROM scratch
ARG PROVIDER=all
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/ca-providers/cluster-autoscaler-provider
ARG CREATED=1970-01-01T00:00:00Z
COPY --from=build /rootfs/ /
COPY --from=build /out/cluster-autoscaler-provider /cluster-autoscaler-provider
ENV PATH=/ HOME=/home/nonroot SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
LABEL org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.title="cluster-autoscaler-provider" \
      org.opencontainers.image.created="${CREATED}" \
      io.ca-providers.provider="${PROVIDER}"
EXPOSE 8086 8087
USER 65532:65532
ENTRYPOINT ["/cluster-autoscaler-provider"]
