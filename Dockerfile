# Builds the sidecar image (default target) and the fake Axiom used by the
# compose setup (target fakeaxiom). Static binaries on a distroless base:
# nothing in the image but the binary and CA certificates.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/sidecar ./cmd/sidecar \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/fakeaxiom ./cmd/fakeaxiom

FROM gcr.io/distroless/static-debian12 AS fakeaxiom
COPY --from=build /out/fakeaxiom /fakeaxiom
ENTRYPOINT ["/fakeaxiom", "-addr", "0.0.0.0:8080"]

# Runs as root: FireLens's socket directory and the node's pod log files are
# root-owned.
FROM gcr.io/distroless/static-debian12
COPY --from=build /out/sidecar /sidecar
ENTRYPOINT ["/sidecar"]
