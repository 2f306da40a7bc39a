/* SPDX-License-Identifier: MIT */
/*
 * A tools/call result as the value an agent gets (see mcp.h and
 * sst_mcp_call_tool): the structured content, else text blocks as one
 * string, else the blocks as they came, so that nothing is lost.
 */
#include "mcp.h"

/* The text of every text block of @p content, joined with "\n"; false when another block is there.
 */
static bool all_text(const sst_value *content, sst__buf *out) {
    for (size_t i = 0; i < sst_array_len(content); i++) {
        const sst_value *b = sst_array_get(content, i);
        const sst_value *type = sst_object_get(b, "type");
        const sst_value *text = sst_object_get(b, "text");
        if (!sst_is_string(type) || strcmp(sst_string_cstr(type), "text") != 0 ||
            !sst_is_string(text)) {
            return false;
        }
        if (i > 0) {
            sst__buf_putc(out, '\n');
        }
        sst__buf_append(out, sst_string_cstr(text), sst_string_len(text));
    }
    return true;
}

sst_value *sst__mcp_result_value(const sst_value *result, sst_error *err) {
    if (!sst_is_object(result)) {
        sst__error(err, SST_EPARSE, "the result is %s, not an object",
                   sst_type_name(sst_value_type(result)));
        return NULL;
    }
    const sst_value *content = sst_object_get(result, "content");
    const sst_value *structured = sst_object_get(result, "structuredContent");
    if (content != NULL && !sst_is_array(content)) {
        sst__error(err, SST_EPARSE, "the result's content is %s, not an array",
                   sst_type_name(sst_value_type(content)));
        return NULL;
    }
    sst__buf text;
    sst__buf_init(&text);
    bool texts = all_text(content, &text);
    sst__buf_putc(&text, '\0'); /* for the message; not part of the text */
    text.len -= text.oom ? 0 : 1;
    if (text.oom) {
        sst__buf_free(&text);
        sst__enomem(err);
        return NULL;
    }
    if (sst_bool_value(sst_object_get(result, "isError"))) {
        const char *msg = texts && text.len > 0 ? text.data : NULL;
        if (msg == NULL && sst_array_len(content) > 0) {
            /* Blocks of other kinds: the first text among them, if any. */
            for (size_t i = 0; i < sst_array_len(content) && msg == NULL; i++) {
                const sst_value *t = sst_object_get(sst_array_get(content, i), "text");
                msg = sst_is_string(t) ? sst_string_cstr(t) : NULL;
            }
        }
        sst__error(err, SST_ETASK, "%s", msg != NULL ? msg : "the tool reported an error");
        sst__buf_free(&text);
        return NULL;
    }
    sst_value *v;
    if (structured != NULL) {
        v = sst_value_ref(structured);
    } else if (texts) {
        v = text.len > 0 ? sst_string_newn(text.data, text.len, err) : sst_string_empty();
    } else {
        v = sst_value_ref(content);
    }
    sst__buf_free(&text);
    return v;
}
