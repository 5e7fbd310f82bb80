# storbench in a container image, for `storbench run PLAN --on kubernetes --image IMAGE`: each
# shard's pod runs this image's storbench. Build it from the repository's top directory:
#   docker build -t REGISTRY/storbench:TAG . && docker push REGISTRY/storbench:TAG
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p storbench

FROM debian:bookworm-slim
# The tools storbench reads the system with (lsblk, findmnt, blockdev) and certificates for a
# Redfish power meter over https.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates util-linux procps \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/storbench /usr/local/bin/storbench
ENTRYPOINT ["storbench"]
