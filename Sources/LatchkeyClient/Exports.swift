// The wire types an app meets in the SDK's answers (`UserProfile`, `GuestLimitations`, `LogoutScope`, `ErrorCode`,
// `AccountDeletionResponse`…) come with `import LatchkeyClient`, so an app imports one module. Typealiases would not
// do: an app would still need `import LatchkeyAPI` for the conformances and members LatchkeyAPI adds in extensions
// (its redaction descriptions) once `MemberImportVisibility` (Swift 7's default, on in this package) applies, and each
// new wire type would need one more alias. Re-exporting is what AsyncKit and Vapor do for the modules they are built on.
@_exported import LatchkeyAPI
