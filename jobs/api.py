"""Jobs over the API: what a client polls after an upload or a pooling answered 202 (or reads
at once when it answered 200: the job ran before the answer).

A job lists its file's errors, so only its owner (and admins) may see it; anyone else's job
is a 404, as on the job page (jobs/views.py). Whoever may see a job may start it again when
it crashed or its worker died (``retry``).
"""

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.reverse import reverse

from jobs.models import Job, JobStatus
from jobs.services import JobNotRetryable, retry_job


# A pattern, not an enum: drf-spectacular would name the enum after the field, and
# assignments have a "status" too (two choice sets under one name fail --fail-on-warn unless
# settings gain ENUM_NAME_OVERRIDES).
@extend_schema_field({"type": "string", "pattern": f"^({'|'.join(JobStatus.values)})$"})
class JobStatusField(serializers.CharField):
    pass


class JobSerializer(serializers.ModelSerializer):
    status = JobStatusField(read_only=True, help_text="queued, running, succeeded or failed.")
    percent = serializers.IntegerField(read_only=True, help_text="0–100 for a progress bar.")
    finished = serializers.BooleanField(read_only=True)
    errors = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="The first file:line problems of a refused file (error_total counts all).",
    )
    result = serializers.DictField(
        read_only=True, help_text="What the work produced, e.g. {'run': id} after a run import."
    )
    url = serializers.HyperlinkedIdentityField(view_name="api:job-detail")
    attempt = serializers.IntegerField(read_only=True, help_text="1, then 2 after a retry, …")
    can_retry = serializers.BooleanField(
        read_only=True,
        help_text="It crashed or its worker died: POST retry/ to start it again.",
    )

    class Meta:
        model = Job
        fields = [
            "id",
            "url",
            "kind",
            "title",
            "status",
            "step",
            "done",
            "total",
            "percent",
            "finished",
            "errors",
            "error_total",
            "result",
            "attempt",
            "can_retry",
            "created_at",
            "updated_at",
            "finished_at",
        ]
        read_only_fields = fields


class RetryRefusedSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why the job cannot be started again.")


# The answers of an endpoint whose whole work is a job (``started``), for its schema.
JOB_STARTED = {
    202: OpenApiResponse(
        JobSerializer, description="Queued or running on a worker: poll Location."
    ),
    200: OpenApiResponse(
        JobSerializer,
        description="Done before the answer (no worker: TASKS_BACKEND's inline default): the "
        "job succeeded or failed, with its result or errors.",
    ),
}


def accepted(job: Job, request) -> Response:
    """The answer to a request that started ``job`` where a 200 means something else (work
    small enough is done in the request and answered with its result; larger work is a
    job): 202 with the job, Location to poll. The job is read again first: without a worker
    (the inline backend) it has run already, and the body says so rather than "queued"."""
    job.refresh_from_db()
    return _job_answer(job, request, status.HTTP_202_ACCEPTED)


def started(job: Job, request) -> Response:
    """The answer to a request whose whole work is ``job``, saying truly where it is: 202
    with the job (Location to poll) while it waits for a worker or runs on one; 200 with the
    finished job (succeeded or failed, its result or errors) when it ran before the answer,
    as the inline backend runs it (TASKS_BACKEND unset: no worker, the request waits)."""
    job.refresh_from_db()
    code = status.HTTP_200_OK if job.finished else status.HTTP_202_ACCEPTED
    return _job_answer(job, request, code)


def _job_answer(job: Job, request, code: int) -> Response:
    body = JobSerializer(job, context={"request": request}).data
    location = reverse("api:job-detail", args=[job.pk], request=request)
    return Response(body, status=code, headers={"Location": location})


@extend_schema_view(
    list=extend_schema(summary="Your jobs, newest first"),
    retrieve=extend_schema(summary="One of your jobs (poll it until finished is true)"),
)
class JobViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = JobSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        user = self.request.user
        jobs = Job.objects.all()
        return jobs if user.is_superuser else jobs.filter(created_by=user)

    @extend_schema(
        summary="Start a job again that crashed or whose worker died",
        request=None,
        responses={
            **JOB_STARTED,
            409: OpenApiResponse(
                RetryRefusedSerializer, description="The job cannot be started again (why)."
            ),
        },
    )
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        try:
            job = retry_job(job=self.get_object())
        except JobNotRetryable as refused:
            return Response({"detail": str(refused)}, status=status.HTTP_409_CONFLICT)
        return started(job, request)
