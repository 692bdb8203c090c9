# syntax=docker/dockerfile:1
# Builds the sidecar image (default target) and the fake Axiom used by the
# compose setup (target fakeaxiom). Static binaries on a distroless base:
# nothing in the image but the binary and CA certificates.
#
# Multi-arch: the Go toolchain runs on the build machine's platform and
# cross-compiles for each target, so
#   docker buildx build --platform linux/amd64,linux/arm64 -t sidecar .
# builds both (Graviton, Apple silicon) without emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/sidecar ./cmd/sidecar \
 && CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags="-s -w" -o /out/fakeaxiom ./cmd/fakeaxiom

FROM gcr.io/distroless/static-debian12 AS fakeaxiom
COPY --from=build /out/fakeaxiom /fakeaxiom
ENTRYPOINT ["/fakeaxiom", "-addr", "0.0.0.0:8080"]

# Runs as root: FireLens's socket directory and the node's pod log files
# (0640 root) are root-owned. The deploy files drop every capability: root
# reads root's own files by their owner bits, without CAP_DAC_*.
FROM gcr.io/distroless/static-debian12
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="sidecar" \
      org.opencontainers.image.description="Ships an app's logs and spans to Axiom from a sidecar" \
      org.opencontainers.image.source="https://github.com/sidecarhq/sidecar" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/sidecar /sidecar
# The sending queue and file offsets (dir_storage); mount a volume here.
ENV SIDECAR_STATE_DIR=/var/lib/sidecar
ENTRYPOINT ["/sidecar"]
