let usage = """
    archiver: archive a catalog of image URLs into a verified offline bundle

    usage:
      archiver run [--catalog PATH|URL] [--out DIR] [--concurrency N] [options]
      archiver serve [--host 127.0.0.1] [--port N] [--faults]
      archiver status [DIR] [--json]
      archiver pack DIR [--output FILE.tar.gz]
      archiver verify DIR|FILE.tar.gz [--json]

    run options:
      --catalog PATH|URL     JSON array of {albumId, id, title, url, thumbnailUrl}
                             (default https://jsonplaceholder.typicode.com/photos)
      --out DIR              bundle directory (default ./archive)
      --concurrency N        most requests in flight, 1 to 64 (default 8)
      --field url|thumbnailUrl   which URL of each record to archive (default url)
      --mirror FROM=TO       fetch URLs starting with FROM from TO instead (repeatable)
      --validate structure|full  PNG check: chunk structure and CRCs (default) or full decode
      --retries N            extra attempts for retriable failures, 0 to 10 (default 3)
      --timeout SECONDS      per attempt, 1 to 3600 (default 30)
      --max-bytes N          largest image accepted (default 52428800)
      --rate R               at most R requests a second (default: no limit)
      --skip-failed          keep earlier failures instead of retrying them
      --durable              fsync every file and directory before recording it
      --prune                delete files of records no longer in the catalog
      --quiet                no progress on stderr
      --json                 print a machine-readable summary on stdout

    pack: a reproducible gzip tarball of manifest.json, index.html, pages/ and images/ (not
          .archiver/), entries sorted, owner root, mtime SOURCE_DATE_EPOCH or 0; prints its sha256
          (default output DIR.tar.gz); exit 0, or 2 when DIR is no bundle
    verify: every done item's file has the manifest's size and sha256 and is a sound PNG,
          and images/ holds nothing else; prints one line per problem and a summary
          (--json: a report on stdout); exit 0 all good, 1 problems found, 2 unusable input

    run exit status: 0 all done, 1 some items failed, 2 usage, catalog or bundle error,
                     130 interrupted (SIGINT), 143 terminated (SIGTERM)
    """
