import ArchiverCore
print("archiver")
