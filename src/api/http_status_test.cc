#include "api/http_status.h"

#include <gtest/gtest.h>

namespace corral::api {
namespace {

constexpr ErrorCode kAllCodes[] = {
    ErrorCode::kInvalidArgument,   ErrorCode::kNotFound,
    ErrorCode::kAlreadyExists,     ErrorCode::kFailedPrecondition,
    ErrorCode::kResourceExhausted, ErrorCode::kUnavailable,
    ErrorCode::kAborted,           ErrorCode::kDeadlineExceeded,
    ErrorCode::kPermissionDenied,  ErrorCode::kUnauthenticated,
    ErrorCode::kUnimplemented,     ErrorCode::kInternal,
};

TEST(HttpStatusTest, MapsEveryCodeAsDocumented) {
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kAborted), 409);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kFailedPrecondition), 412);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnimplemented), 501);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInternal), 500);
}

TEST(HttpStatusTest, StatusMapsBackToTheSameCodeExceptTheSharedConflict) {
  for (ErrorCode code : kAllCodes) {
    ErrorCode back = ErrorCodeForHttpStatus(HttpStatusFor(code));
    if (code == ErrorCode::kAlreadyExists) {
      EXPECT_EQ(back, ErrorCode::kAborted);  // 409 is shared; the JSON body tells them apart
    } else {
      EXPECT_EQ(back, code) << ErrorCodeName(code);
    }
  }
}

TEST(HttpStatusTest, ForeignStatusesMapToTheClosestCode) {
  EXPECT_EQ(ErrorCodeForHttpStatus(413), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForHttpStatus(431), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForHttpStatus(418), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForHttpStatus(405), ErrorCode::kUnimplemented);
  EXPECT_EQ(ErrorCodeForHttpStatus(408), ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(ErrorCodeForHttpStatus(502), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeForHttpStatus(507), ErrorCode::kInternal);
  EXPECT_EQ(ErrorCodeForHttpStatus(302), ErrorCode::kInternal);
}

TEST(HttpStatusTest, ErrorResponseIsTheDocumentedJson) {
  HttpResponse r =
      ErrorResponse(Error{ErrorCode::kInvalidArgument, "job 42: no such partition \"a100\""});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(
      r.body,
      R"({"error":{"code":"INVALID_ARGUMENT","message":"job 42: no such partition \"a100\""}})");
}

TEST(HttpStatusTest, ErrorResponseSurvivesInvalidUtf8) {
  HttpResponse r = ErrorResponse(Error{ErrorCode::kNotFound, "file \xff\xfe"});
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("NOT_FOUND"), std::string::npos);
}

TEST(HttpStatusTest, CheckResponseRoundTripsEveryError) {
  for (ErrorCode code : kAllCodes) {
    Error e{code, "thing 7: went wrong"};
    Result<HttpResponse> checked = CheckResponse(ErrorResponse(e));
    ASSERT_FALSE(checked.has_value());
    EXPECT_EQ(checked.error(), e);  // the body's code wins over the status (409 is shared)
  }
}

TEST(HttpStatusTest, CheckResponsePassesSuccessAndTransportErrors) {
  HttpResponse ok;
  ok.status = 201;
  ok.body = "{}";
  Result<HttpResponse> checked = CheckResponse(ok);
  ASSERT_TRUE(checked.has_value());
  EXPECT_EQ(checked->status, 201);
  EXPECT_EQ(checked->body, "{}");

  Result<HttpResponse> transport = CheckResponse(Result<HttpResponse>(Unavailable("down")));
  ASSERT_FALSE(transport.has_value());
  EXPECT_EQ(transport.error(), (Error{ErrorCode::kUnavailable, "down"}));
}

TEST(HttpStatusTest, CheckResponseWithoutJsonUsesTheStatusLine) {
  HttpResponse r;
  r.status = 502;
  r.content_type = "text/plain";
  r.body = "upstream went away\n";
  Result<HttpResponse> checked = CheckResponse(r);
  ASSERT_FALSE(checked.has_value());
  EXPECT_EQ(checked.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(checked.error().message, "HTTP 502 Bad Gateway: upstream went away");

  r.status = 404;
  r.body = "";
  checked = CheckResponse(r);
  EXPECT_EQ(checked.error(), (Error{ErrorCode::kNotFound, "HTTP 404 Not Found"}));

  // JSON of another shape, and an unknown code name: the status decides the code.
  r.status = 429;
  r.body = R"({"error":{"code":"SLOW_DOWN","message":"too many"}})";
  checked = CheckResponse(r);
  EXPECT_EQ(checked.error(), (Error{ErrorCode::kResourceExhausted, "too many"}));
  r.body = R"([1,2,3])";
  checked = CheckResponse(r);
  EXPECT_EQ(checked.error(),
            (Error{ErrorCode::kResourceExhausted, "HTTP 429 Too Many Requests: [1,2,3]"}));
}

TEST(HttpStatusTest, ReasonPhrases) {
  EXPECT_EQ(HttpReasonPhrase(200), "OK");
  EXPECT_EQ(HttpReasonPhrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(HttpReasonPhrase(299), "Unknown");
}

}  // namespace
}  // namespace corral::api
