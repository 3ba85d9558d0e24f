# Latchkey in a container: the release binary on Debian's slim image, run as a user of its own.
# Not built by CI (this machine has no Docker engine); scripts/test checks the same binary without the toolchain.
#
#   docker build -t latchkey .
#   docker run -p 8080:8080 -v latchkey-data:/var/lib/latchkey -e LATCHKEY_PUBLIC_URL=https://auth.example.com latchkey
#
# The database and its master key file live in the /var/lib/latchkey volume: back it up (latchkey backup) and keep it.

FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY . .
RUN swift build --package-path Server -c release --static-swift-stdlib --product latchkey \
    && cp "$(swift build --package-path Server -c release --show-bin-path)/latchkey" /latchkey \
    && strip /latchkey

FROM debian:bookworm-slim
# The libraries the static binary still takes from the system (libstdc++, zlib, libxml2 with ICU) and CA certificates
# for the HTTPS it fetches (Apple's and other providers' keys, SMTP over TLS).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libstdc++6 zlib1g libxml2 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /var/lib/latchkey --create-home --shell /usr/sbin/nologin latchkey \
    && chmod 0700 /var/lib/latchkey
COPY --from=build /latchkey /usr/local/bin/latchkey
USER latchkey
WORKDIR /var/lib/latchkey
ENV LATCHKEY_HOST=0.0.0.0 LATCHKEY_PORT=8080 LATCHKEY_DATABASE=/var/lib/latchkey/latchkey.sqlite
VOLUME /var/lib/latchkey
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/latchkey"]
CMD ["serve"]
