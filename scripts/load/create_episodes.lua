-- wrk script: POST /v1/episodes until this thread has created SHARE episodes (env), then stop.
-- Used to fill the server with open episodes for the memory measurement.
local share = tonumber(os.getenv("SHARE") or "50000")
local task = os.getenv("TASK") or "T2_multi_page"
local sent, created, failed = 0, 0, 0

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  sent = sent + 1
  return wrk.format(nil, "/v1/episodes", nil,
    string.format('{"task_id":"%s","seed":%d}', task, sent))
end

function response(status, headers, body)
  if status == 201 then
    created = created + 1
  else
    failed = failed + 1
  end
  if created >= share then
    wrk.thread:stop()
  end
end
