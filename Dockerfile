# syntax=docker/dockerfile:1
# kubecause: a static Go binary on a distroless, non-root base.
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=$(git describe --tags --always) --build-arg REVISION=$(git rev-parse --short HEAD) -t kubecause .
# Without a Docker daemon, hack/image.sh builds the same image with ko (see docs/install.md).

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# Empty build args: hack/ldflags.sh asks git (when .git is in the context), else the binary takes its
# version from the build info (exporter/version.go).
ARG VERSION
ARG REVISION
ARG BRANCH
ARG BUILD_DATE
WORKDIR /src
# The build args are in the environment of RUN, where hack/ldflags.sh reads them.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -o /out/kubecause \
      -ldflags "$(sh hack/ldflags.sh)" ./exporter/cmd/kubecause

FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.source="https://github.com/kubecause/kubecause" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.description="Cause-labelled Prometheus metrics from Kubernetes Events"
COPY --from=build /out/kubecause /kubecause
USER 65532:65532
EXPOSE 9737
ENTRYPOINT ["/kubecause"]
