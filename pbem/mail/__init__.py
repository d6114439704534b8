"""Mail in and out: reading players' mails, composing the service's, sources and sinks."""
